"""The network trace on real syscalls: a resolver's address sorting is no reach; a datagram or a connection is."""

from __future__ import annotations

import sys
from pathlib import Path

from paths import TESTS

from boundary.jobs.job import run_job
from boundary.jobs.nettrace import read_trace
from boundary.results import NetworkUse
from boundary.results.network import BRIDGE_PORT
from boundary.runners.contract import Job, JobPaths

STOCK_HOSTS = TESTS / "stock_etc/debian-hosts"

# The model first (every job talks to it), then what the test asks: `resolve` looks `localhost` up as every client
# does (glibc's getaddrinfo, which sorts the addresses), `udp`/`tcp` send to or connect to HOST:PORT.
PROGRAM = f"""
import socket, sys
socket.create_connection(("127.0.0.1", {BRIDGE_PORT})).close()
for what in sys.argv[1:]:
    if what == "resolve":
        print(sorted({{a[4][0] for a in socket.getaddrinfo("localhost", None)}}))
        continue
    kind, _, target = what.partition(":")
    host, _, port = target.rpartition(":")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
    try:
        s.connect((host.strip("[]"), int(port)))
        if kind == "udp":
            s.send(b"?")
    except OSError as error:
        print(what, error.strerror)
    s.close()
"""


def traced(tmp_path: Path, *asks: str, setup: str = "") -> tuple[NetworkUse, str]:
    """A job (python, no agent) in its own loopback-only namespaces under the harness's strace, after `setup`
    (bash, as root in the job's own mount and network namespaces); what its trace shows, and what it printed."""
    records = tmp_path / "records"
    records.mkdir()
    script = f'{setup}\nexec "$@"'
    argv = ["bash", "-c", script, "job", sys.executable, "-c", PROGRAM, *asks]
    job = Job("a", JobPaths("a", tmp_path, tmp_path, None, None), argv, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    outcome = run_job(job, tmp_path / "model.sock", tmp_path / "job.log", 30.0, records / "a.strace")
    said = outcome.transcript.read_text()
    assert outcome.exit_code == 0, said
    return read_trace(records / "a.strace"), said


def test_looking_up_localhost_with_a_stock_hosts_file_reaches_nothing(tmp_path: Path) -> None:
    """Debian's stock /etc/hosts gives localhost ::1 too: the resolver connects a datagram socket to each address
    (port 0) to sort them, and sends nothing."""
    use, said = traced(tmp_path, "resolve", setup=f"mount --bind {STOCK_HOSTS} /etc/hosts")
    assert "'::1'" in said and "'127.0.0.1'" in said, said
    assert use.clean, use.explain()


def test_looking_up_localhost_with_ipv6_off_reaches_nothing(tmp_path: Path) -> None:
    setup = f"mount --bind {STOCK_HOSTS} /etc/hosts; sysctl -qw net.ipv6.conf.all.disable_ipv6=1"
    use, _ = traced(tmp_path, "resolve", "tcp:127.0.0.1:4011", setup=setup)
    assert use.foreign == ["127.0.0.1:4011"], use.explain()  # the trace still sees what the job does reach


def test_a_datagram_to_a_loopback_port_is_named(tmp_path: Path) -> None:
    use, _ = traced(tmp_path, "udp:127.0.0.1:5353")
    assert not use.clean and use.foreign == ["127.0.0.1:5353"], use.explain()
    assert "127.0.0.1:5353 (by pid" in use.explain()


def test_a_connection_to_ipv6_loopback_is_named(tmp_path: Path) -> None:
    use, _ = traced(tmp_path, "tcp:[::1]:8317")
    assert not use.clean and use.foreign == ["[::1]:8317"], use.explain()
