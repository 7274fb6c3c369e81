"""The shell's own listing (`boundary/reach/listing.py`), run by bash in a network namespace of its own with canary
listeners of every kind: what it lists, what each program reaches, what it leaves alone, and what it says when its
own listener cannot be opened or its tries are cut."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from boundary.reach import listing, programs
from boundary.reach.judge import first, parse
from boundary.toolchain.node import wheel_bin_dir

CANARY = "BOUNDARY-5he11"
# Run in the namespace: loopback up, listeners serving the canary (TCP on IPv4 and IPv6, a unix socket, an abstract
# one, one on a port and one at a path the harness skips), then bash with the script.
DRIVER = """
import socket, subprocess, sys, threading
subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
canary, script, where = sys.argv[1], sys.argv[2], sys.argv[3]
def listen(family, address):
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind(address)
    server.listen(8)
    def serve():
        while True:
            connection, _ = server.accept()
            with connection:  # the whole request read: a close with some unread resets the answer
                got = b""
                while b"\\r\\n\\r\\n" not in got and (chunk := connection.recv(4096)):
                    got += chunk
                connection.sendall(b"HTTP/1.0 200 OK\\r\\n\\r\\n" + canary.encode())
    threading.Thread(target=serve, daemon=True).start()
listen(socket.AF_INET, ("127.0.0.1", 8317))
listen(socket.AF_INET6, ("::1", 8318))
listen(socket.AF_INET, ("127.0.0.1", 4010))
listen(socket.AF_UNIX, where + "/api.sock")
listen(socket.AF_UNIX, where + "/model.sock")
listen(socket.AF_UNIX, "\\0boundary-listing-test")
said = subprocess.run(["bash"], input=script, capture_output=True, text=True, timeout=120, cwd=where)
sys.stdout.write(said.stdout + said.stderr)
"""


def namespace() -> list[str]:
    """A prefix giving the run a network namespace of its own: no listener of this machine's is tried."""
    for prefix in (["unshare", "--net"], ["unshare", "--user", "--map-root-user", "--net"]):
        try:
            if (
                subprocess.run([*prefix, "ip", "link", "set", "lo", "up"], capture_output=True, timeout=5).returncode
                == 0
            ):
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            continue
    pytest.skip("cannot make a network namespace here (unshare refused)")


def run_listing(tmp_path: Path, path: str, **options: object) -> str:
    skip = {"ports": [4010], "paths": [f"{tmp_path}/model.sock"], "under": ["/"], "own": f"{tmp_path}/"}
    script = programs.script([]) + listing.script(skip, **options)  # type: ignore[arg-type]
    env = {**os.environ, "PATH": path}
    argv = [*namespace(), sys.executable, "-c", DRIVER, CANARY, script, str(tmp_path)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=150, env=env).stdout


def test_the_shell_lists_every_kind_and_each_program_reaches_it(tmp_path: Path) -> None:
    """Its own listeners listed; TCP on IPv4 and IPv6 reached by bash, curl and Node, unix sockets (a path, an
    abstract one) by curl and Node; the harness's port and socket, and its own, left alone; `done` last."""
    said = run_listing(tmp_path, f"{wheel_bin_dir()}{os.pathsep}{os.environ.get('PATH', '')}")
    lines, attempts = said.splitlines(), parse(said)
    assert "REACH shell:own-tcp listed" in lines and "REACH shell:own-unix listed" in lines, said
    reached = {
        **{f"shell:{p}:found:tcp:127.0.0.1:8317": p for p in ("bash", "curl", "node")},
        **{f"shell:{p}:found:tcp:::1:8318": p for p in ("bash", "curl", "node")},
        **{f"shell:{p}:found:unix:{tmp_path}/api.sock": p for p in ("curl", "node")},
        **{f"shell:{p}:found:unix:@boundary-listing-test": p for p in ("curl", "node")},
    }
    for label in reached:
        attempt = first(attempts, label)
        assert attempt is not None and attempt.outcome == "answered" and CANARY in attempt.detail, (label, said)
    assert not any(s in said for s in (":4010 ", "model.sock", listing.OWN_SOCKET, f":{listing.OWN_PORT} ")), said
    assert lines[-1] == listing.DONE and not (tmp_path / listing.OWN_SOCKET).exists(), said


def test_tries_beyond_the_cap_are_said_cut(tmp_path: Path) -> None:
    """None tried (the cap at 0), its own listeners still up: the cut is said, and the listing still ends."""
    said = run_listing(tmp_path, os.environ.get("PATH", ""), cap=0, find=["find", str(tmp_path), "-type", "s"])
    lines = said.splitlines()
    assert "REACH shell:cut named tried 0 of 4" in lines and lines[-1] == listing.DONE, said  # 2 sockets, 2 TCP


def test_without_a_listener_of_its_own_the_shell_says_why_and_a_stopped_node_is_named(tmp_path: Path) -> None:
    """socat refused a unix socket (srt's seccomp) and Node stopped by a guard: the control says the kind is closed,
    in errno words; each place Node was to try says what Node said."""
    stopped = tmp_path / "bin"
    stopped.mkdir()
    for name, words in (
        ("socat", "2026/01/01 socat[9] E socket(1, 1, 0): Operation not permitted"),
        ("node", "node is not allowed by the interpreter guard"),
    ):
        (stopped / name).write_text(f"#!/bin/sh\necho '{words}' >&2\nexit 1\n")
        (stopped / name).chmod(0o755)
    said = run_listing(tmp_path, f"{stopped}{os.pathsep}{os.environ.get('PATH', '')}", find=["find", str(tmp_path)])
    lines = said.splitlines()
    assert "REACH shell:own-unix error socket EPERM" in lines and "REACH shell:own-tcp error socket EPERM" in lines
    node = first(parse(said), "shell:node:found:tcp:127.0.0.1:8317")
    assert node is not None and node.detail.startswith("run Node exited 1: node is not allowed"), said
    assert lines[-1] == listing.DONE, said
