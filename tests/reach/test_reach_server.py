"""The reach canary server logs every request before it answers: a fetch that keeps the page to itself is seen."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import boundary.reach.server as server_module
from boundary.reach.places import Request, requests_of

TOKEN = "BOUNDARY-00000000000000000042"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_each_request_is_printed_with_its_place_and_path_before_the_answer() -> None:
    port = _free_port()
    config = {"tcp": [["runner_api_tcp", "127.0.0.1", port]], "unix": [], "tokens": {"runner_api_tcp": TOKEN}}
    argv = [sys.executable, str(Path(server_module.__file__))]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdin is not None and server.stdout is not None
        try:
            server.stdin.write(json.dumps(config) + "\n")
            server.stdin.close()
            assert server.stdout.readline().strip() == "ready"
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(f"http://127.0.0.1:{port}/any_tool-metadata-web_get-url?x=1", timeout=10) as answer:
                assert TOKEN in answer.read().decode()
            line = server.stdout.readline()
        finally:
            server.kill()
    assert list(requests_of(iter([line, "ready\n", "noise\n"]))) == [
        Request("runner_api_tcp", "/any_tool-metadata-web_get-url?x=1")
    ]
