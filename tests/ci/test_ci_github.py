"""The Action's calls to GitHub, against a GitHub API on loopback: the base branch's newest report artifact (its
zip fetched from storage without the token), nothing there said in one line, and one comment kept current."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from boundary.ci.github import MARKER
from tests.report.test_render import make_report

TOKEN = "ghs_test-token"
REPO = "acme/runners"


class FakeGitHub(BaseHTTPRequestHandler):
    """The API paths the Action uses, and the storage its artifact zips redirect to."""

    artifacts: ClassVar[list[dict[str, Any]]] = []
    zips: ClassVar[dict[int, bytes]] = {}
    comments: ClassVar[list[dict[str, Any]]] = []
    refuse: ClassVar[int] = 0  # an HTTP status to answer every API call with (0: answer)
    seen: ClassVar[list[tuple[str, str, str | None]]] = []  # (method, path, Authorization)

    def log_message(self, *_: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, self.headers.get("Authorization")))
        if self.path.startswith("/storage/"):
            return self._send(200, self.zips[int(self.path.rpartition("/")[2])], "application/zip")
        if self.refuse:
            return self._json(self.refuse, {"message": "Resource not accessible by integration"})
        if self.path.startswith(f"/repos/{REPO}/actions/artifacts?"):
            return self._json(200, {"total_count": len(self.artifacts), "artifacts": self.artifacts})
        if self.path.startswith(f"/repos/{REPO}/actions/artifacts/") and self.path.endswith("/zip"):
            self.send_response(302)
            self.send_header("Location", f"/storage/{self.path.split('/')[-2]}")
            self.end_headers()
            return None
        if self.path.startswith(f"/repos/{REPO}/issues/7/comments?"):
            return self._json(200, self.comments)
        return self._json(404, {"message": "Not Found"})

    def do_POST(self) -> None:
        self.seen.append(("POST", self.path, self.headers.get("Authorization")))
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.comments.append({"id": 100 + len(self.comments), "body": body["body"]})
        self._json(201, self.comments[-1])

    def do_PATCH(self) -> None:
        self.seen.append(("PATCH", self.path, self.headers.get("Authorization")))
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        comment = next(c for c in self.comments if self.path.endswith(f"/comments/{c['id']}"))
        comment["body"] = body["body"]
        self._json(200, comment)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: int, data: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def github() -> Iterator[str]:
    FakeGitHub.artifacts, FakeGitHub.zips, FakeGitHub.comments, FakeGitHub.seen = [], {}, [], []
    FakeGitHub.refuse = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _artifact(id: int, branch: str, expired: bool = False) -> dict[str, Any]:
    run = {"id": 9000 + id, "head_branch": branch, "head_sha": "f" * 40}
    return {
        "id": id,
        "name": "boundary-reports",
        "expired": expired,
        "created_at": "2026-12-05T04:40:00Z",
        "workflow_run": run,
    }


def _zip(files: dict[str, str]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return data.getvalue()


def _boundary(api: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GITHUB_API_URL": api, "GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO}
    argv = [sys.executable, "-m", "boundary.cli", "ci", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)


def test_the_base_branchs_newest_unexpired_report_is_fetched_and_storage_never_gets_the_token(
    github: str, tmp_path: Path
) -> None:
    nightly = json.dumps(make_report())
    FakeGitHub.artifacts = [_artifact(3, "bump-opencode"), _artifact(2, "main", expired=True), _artifact(1, "main")]
    FakeGitHub.zips = {1: _zip({"runner-sandbox.md": "#", "runner-sandbox.json": nightly})}
    done = _boundary(github, "base-report", "--branch", "main", "--out", str(tmp_path / "base.json"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "base.json").read_text() == nightly
    assert "base report: runner-sandbox.json of artifact boundary-reports from main (run 9001" in done.stdout
    auth = {path.partition("?")[0]: header for _, path, header in FakeGitHub.seen}
    assert auth[f"/repos/{REPO}/actions/artifacts/1/zip"] == f"Bearer {TOKEN}"
    assert auth["/storage/1"] is None


def test_no_base_report_is_one_line_and_exit_0(github: str, tmp_path: Path) -> None:
    FakeGitHub.artifacts = [_artifact(3, "bump-opencode")]
    done = _boundary(github, "base-report", "--branch", "main", "--out", str(tmp_path / "base.json"))
    assert done.returncode == 0 and not (tmp_path / "base.json").exists()
    assert done.stdout.splitlines() == [
        "no base report: no unexpired artifact boundary-reports from branch main (a first run, or expired): "
        "nothing to compare with"
    ]


def test_a_token_without_the_scope_is_named_in_that_line(github: str, tmp_path: Path) -> None:
    FakeGitHub.refuse = 403
    done = _boundary(github, "base-report", "--branch", "main", "--out", str(tmp_path / "base.json"))
    assert done.returncode == 0 and not (tmp_path / "base.json").exists()
    assert "403" in done.stdout and "the token needs `actions: read`" in done.stdout


def test_the_pull_requests_comment_is_made_once_then_kept_current(github: str, tmp_path: Path) -> None:
    report = make_report()
    report["comparison"] = {"base": {"name": "base.json", "started": "2026-12-05T04:23:10Z"}, "changes": []}
    (tmp_path / "report.json").write_text(json.dumps(report))
    FakeGitHub.comments = [{"id": 1, "body": "LGTM"}]
    argv = ["comment", "--report", str(tmp_path / "report.json"), "--pr", "7", "--link", "https://ci/run/1"]
    first, second = _boundary(github, *argv), _boundary(github, *argv)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert "created" in first.stdout and "updated" in second.stdout
    assert len(FakeGitHub.comments) == 2  # the reviewer's, and boundary's one
    body = FakeGitHub.comments[1]["body"]
    assert body.startswith(MARKER) and "boundary: PASS" in body
    assert "against base.json (started 2026-12-05T04:23:10Z): 0 weaker, 0 stronger, 0 moved" in body
    assert "(https://ci/run/1)" in body
