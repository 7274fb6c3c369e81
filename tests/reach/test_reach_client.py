"""The reach client against the reach canary server, on this machine's loopback and in a temporary directory only:
what it prints for a canary answered, a socket missing, a port closed, a redirect, and a bus's answer to `Hello`."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary.reach import client as reach_client
from boundary.reach.judge import finished, first, parse

ROOT = Path(reach_client.__file__).parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, object]]:
    port, api = free_port(), str(tmp_path / "api.sock")
    config = {
        "tcp": [["runner_api_tcp", "127.0.0.1", port], ["public", "127.0.0.1", free_port()]],
        "unix": [["runner_api_unix", api]],
        "tokens": {"runner_api_tcp": "BOUNDARY-aaaa", "runner_api_unix": "BOUNDARY-bbbb", "public": "BOUNDARY-cccc"},
        "redirects": {"/to-runner_api_tcp": f"http://127.0.0.1:{port}/"},
    }
    source = (ROOT / "server.py").read_text()
    server = subprocess.Popen([sys.executable, "-c", source], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdin is not None
    server.stdin.write(json.dumps(config) + "\n")
    server.stdin.close()
    assert server.stdout is not None and server.stdout.readline().strip() == "ready"
    yield config
    server.terminate()
    server.wait(10)
    server.stdout.close()
    assert not Path(api).exists(), "the server left its unix socket behind"


def run_client(tmp_path: Path, mode: str, targets: list[dict[str, object]]) -> str:
    client = tmp_path / "client.py"
    shutil.copy(ROOT / "client.py", client)
    config = {"targets": targets, "own_token": "BOUNDARY-0wn0", "own_port": free_port()}
    Path(f"{client}.json").write_text(json.dumps(config))
    env = {"PATH": "/usr/bin:/bin"}  # no proxy named
    return subprocess.run(
        [sys.executable, str(client), mode], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    ).stdout


def test_each_target_answers_its_canary_or_says_why_not(tmp_path, served):
    (name, address, port), _ = served["tcp"]
    targets = [
        {"name": name, "kind": "tcp", "address": address, "port": port},
        {"name": "runner_api_unix", "kind": "unix", "path": served["unix"][0][1]},
        {"name": "missing", "kind": "unix", "path": str(tmp_path / "nothing.sock")},
        {"name": "closed", "kind": "tcp", "address": "127.0.0.1", "port": free_port()},
    ]
    said = parse(out := run_client(tmp_path, "known", targets))
    assert "BOUNDARY-aaaa" in first(said, "runner_api_tcp:direct").detail
    assert "BOUNDARY-bbbb" in first(said, "runner_api_unix:direct").detail
    assert first(said, "missing:direct").detail == "connect ENOENT"
    assert first(said, "closed:direct").detail == "connect ECONNREFUSED"
    assert first(said, "closed:proxy").detail == "proxy NONE"  # nothing named: not an attempt
    assert finished(out)


def test_the_public_place_redirects_to_the_target(served):
    import urllib.request

    _, (_, address, port) = served["tcp"]
    with urllib.request.urlopen(f"http://{address}:{port}/to-runner_api_tcp", timeout=10) as page:
        assert b"BOUNDARY-aaaa" in page.read()


def test_the_controls_reach_the_clients_own_listeners(tmp_path):
    said = parse(run_client(tmp_path, "control", []))
    assert all("BOUNDARY-0wn0" in first(said, f"control:{kind}").detail for kind in ("tcp", "unix"))


def test_a_bus_answers_the_clients_hello_with_the_name_it_gives(tmp_path):
    """A private dbus-daemon (the same daemon as a host's system bus) takes the handshake and the method call."""
    path = tmp_path / "bus"
    config = tmp_path / "bus.conf"
    config.write_text(
        "<!DOCTYPE busconfig PUBLIC '-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN'"
        " 'http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd'>"
        f"<busconfig><type>session</type><listen>unix:path={path}</listen><auth>EXTERNAL</auth>"
        "<policy context='default'><allow send_destination='*'/><allow receive_sender='*'/><allow own='*'/>"
        "</policy></busconfig>"
    )
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert daemon.stdout is not None and daemon.stdout.readline().startswith("unix:")
        said = parse(run_client(tmp_path, "known", [{"name": "system_bus", "kind": "dbus", "path": str(path)}]))
        hello = first(said, "system_bus:direct")
        assert hello is not None and hello.outcome == "answered" and hello.detail.startswith("dbus-hello :1.")
    finally:
        daemon.terminate()
        daemon.wait(10)
        assert daemon.stdout is not None
        daemon.stdout.close()
