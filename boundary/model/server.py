"""One scripted model server per test session, shared by every job.

It listens on a Unix socket (reachable from a job's private network
namespace through a loopback bridge) and routes by path:
`/jobs/<job>/<the API's path>`, and answers in the dialect that path names
(Chat Completions for opencode, Messages for Claude Code, Responses for codex).
"""

from __future__ import annotations

import json
import os
import socketserver
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from boundary.model.chat import ChatCompletions
from boundary.model.conversation import next_turn
from boundary.model.dialect import Dialect, ModelRequest
from boundary.model.messages import Messages
from boundary.model.record import JobRecord
from boundary.model.responses import Responses
from boundary.model.script import Script
from boundary.model.view import PathView

# A request that names itself a probe of the harness's own (the reach client's GETs, which may find the model's
# bridge among the sockets a job sees): recorded as such, never as a stray request of some job.
PROBE_HEADER = "X-Boundary-Probe"

DIALECTS: tuple[Dialect, ...] = (ChatCompletions(), Messages(), Responses())


def dialect_for(path: str) -> Dialect | None:
    """The dialect a request path (after /jobs/<job>) speaks; query strings (`?beta=true`) ignored."""
    route = path.partition("?")[0]
    return next((d for d in DIALECTS if route == d.path_suffix or route in d.side_routes), None)


class ModelServer:
    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path
        self.jobs: dict[str, tuple[Script, JobRecord]] = {}
        self.views: dict[str, PathView] = {}  # job -> where it sees the host's paths (its calls and results cross)
        self.stray: list[str] = []  # requests no job claimed
        # the harness's own probes (PROBE_HEADER) that found the model: the one service a job may reach
        self.probes: list[str] = []
        self._lock = threading.Lock()
        self._server: _UnixHTTPServer | None = None

    def open_job(self, job: str, script: Script, replace: bool = False, view: PathView | None = None) -> JobRecord:
        """Serve `script` to the job; `replace` serves a new script to a job that runs again (resumed); `view`:
        where the job sees host paths its runner binds elsewhere (its calls are told so, its results read back)."""
        with self._lock:
            if job in self.jobs and not replace:
                raise ValueError(f"job {job!r} is already registered with the model server")
            record = JobRecord(job)
            self.jobs[job] = (script, record)
            self.views[job] = view or PathView()
            return record

    def lookup(self, job: str) -> tuple[Script, JobRecord, PathView] | None:
        with self._lock:
            entry = self.jobs.get(job)
            return None if entry is None else (*entry, self.views[job])

    def start(self) -> ModelServer:
        if self.socket_path.exists():
            self.socket_path.unlink()
        self._server = _UnixHTTPServer(str(self.socket_path), _Handler)
        self._server.model = self
        os.chmod(self.socket_path, 0o666)  # jobs may run as another user
        threading.Thread(target=self._server.serve_forever, args=(0.05,), name="model-server", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.socket_path.unlink(missing_ok=True)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    model: ModelServer


class _Handler(BaseHTTPRequestHandler):
    server: _UnixHTTPServer
    protocol_version = "HTTP/1.1"

    def address_string(self) -> str:
        return "unix"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are recorded per job, not logged

    def do_GET(self) -> None:
        self._refuse()

    def do_POST(self) -> None:
        started = time.monotonic()
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))  # always: the client is still sending
        job, _, rest = self.path.removeprefix("/jobs/").partition("/")
        entry, dialect = self.server.model.lookup(job), dialect_for("/" + rest)
        if entry is None or dialect is None:
            self._refuse()
            return
        script, record, view = entry
        sessions = record.note_body(raw, dict(self.headers.items()))
        body = self._parse_json(raw, record)
        if body is None:
            return
        side = dialect.side_routes.get(("/" + rest).partition("?")[0])
        if side is not None:
            self._send_json(side)
            return
        request = _seen_from_host(replace(dialect.parse(body), sessions=sessions), view)
        turn = next_turn(script, request, record)
        calls = [view.call(call) for call in turn.calls or ()]
        events = dialect.stream_tool_calls(calls) if calls else dialect.stream_text(turn.text)
        # before the reply: the job may act on it at once
        record.note_request(request.tools, time.monotonic() - started, request.deferred)
        self._send_sse(events)

    def _parse_json(self, raw: bytes, record: JobRecord) -> dict[str, Any] | None:
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as error:
            body = error
        if not isinstance(body, dict):
            record.note_error(f"request body is not a JSON object: {str(body)[:200]}")
            self.send_error(400)
            return None
        return body

    def _send_sse(self, events: Any) -> None:
        payload = "".join(events).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_json(self, reply: dict[str, Any]) -> None:
        payload = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _refuse(self) -> None:
        model = self.server.model
        (model.probes if self.headers.get(PROBE_HEADER) else model.stray).append(f"{self.command} {self.path}")
        self.send_error(404, "no such scripted job")


def _seen_from_host(request: ModelRequest, view: PathView) -> ModelRequest:
    """The request with the paths its tool results name where the host has them (the harness judges there)."""
    if not view:
        return request
    return replace(request, results={key: view.outward(text) for key, text in request.results.items()})
