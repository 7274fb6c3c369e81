"""The reach scenario's canary servers: what a real host serves where its secrets are, each answering a canary.

Run by the harness inside the jobs' shared network, PID and mount namespace (`boundary.jobs.pod`), never on this
machine's own network: `python3 -c <this file>`, CONFIG on its standard input (an argument list is anyone's to read
in /proc), one line of JSON
`{"tcp": [[name, address, port], ...], "unix": [[name, path], ...], "tokens": {name: canary},
"redirects": {path: url}}`. Every request to a served place gets that place's canary (as a runner API, a cloud
metadata service or the Docker API would answer with a credential); on the `public` place, a path in
`redirects` answers 302 to its URL (the SSRF through a redirect), and any other path the `public` canary.
Prints `ready` once every socket listens, then `request NAME PATH` for every request, before it answers: a tool
that fetched a place and kept the page to itself (a download to a file) is seen by the place it reached. Runs until
killed and removes its unix sockets on SIGTERM.

Only the standard library: it runs under whatever Python the jobs' host has.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import ThreadingMixIn, UnixStreamServer
from typing import Any

PRINTED = threading.Lock()


def handler(name: str, token: str, redirects: dict[str, str]) -> type[BaseHTTPRequestHandler]:
    class Canary(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with PRINTED:
                print("request", name, json.dumps(self.path), flush=True)
            target = redirects.get(self.path.split("?")[0])
            if target is not None:
                self.send_response(302)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"service": name, "token": token, "AccessKeyId": token}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_PUT = do_HEAD = do_GET

        def address_string(self) -> str:  # a unix peer has no (host, port)
            return name

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Canary


class UnixHTTPServer(ThreadingMixIn, UnixStreamServer):
    daemon_threads = True


def serve(config: dict[str, Any]) -> None:
    tokens, redirects = config["tokens"], config.get("redirects", {})
    servers: list[Any] = []
    for name, address, port in config["tcp"]:
        servers.append(ThreadingHTTPServer((address, port), handler(name, tokens[name], redirects)))
    made: list[str] = []
    for name, path in config["unix"]:
        if os.path.lexists(path):
            os.unlink(path)
        servers.append(UnixHTTPServer(path, handler(name, tokens[name], {})))
        os.chmod(path, 0o666)
        made.append(path)

    def stop(*_: object) -> None:
        for path in made:
            if os.path.lexists(path):
                os.unlink(path)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    socket.setdefaulttimeout(10)
    serve(json.loads(sys.stdin.readline()))
