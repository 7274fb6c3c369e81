"""The network watch that needs no ptrace: a packet capture in the job's namespace, where every address is local."""

from __future__ import annotations

import socket
import struct
import sys
import time
from pathlib import Path

import pytest

from boundary.jobs.job import run_job
from boundary.jobs.packets import PacketWatch, Sighting, parse_frame
from boundary.jobs.pod import Pod
from boundary.results.network import BRIDGE_PORT, MODEL
from boundary.runners.contract import Job, JobPaths

LO_HEADER_V4 = bytes(12) + b"\x08\x00"
LO_HEADER_V6 = bytes(12) + b"\x86\xdd"


def ipv4(protocol: int, destination: str, segment: bytes) -> bytes:
    header = bytes([0x45, 0, 0, 0, 0, 0, 0, 0, 64, protocol, 0, 0]) + socket.inet_aton("127.0.0.1")
    return LO_HEADER_V4 + header + socket.inet_aton(destination) + segment


def tcp(port: int, flags: int) -> bytes:
    return struct.pack("!HHIIBB", 40000, port, 0, 0, 0x50, flags) + bytes(6)


def test_a_connection_is_seen_by_its_first_packet_only() -> None:
    assert parse_frame(ipv4(6, "1.2.3.4", tcp(443, 0x02))) == ("tcp", "127.0.0.1:40000", "1.2.3.4:443")
    assert parse_frame(ipv4(6, "127.0.0.1", tcp(40000, 0x12))) is None  # the answer (SYN+ACK)
    assert parse_frame(ipv4(6, "1.2.3.4", tcp(443, 0x10))) is None  # data of a connection already seen


def test_datagrams_and_ipv6_are_seen() -> None:
    udp = struct.pack("!HHHH", 5353, 53, 9, 0) + b"x"
    assert parse_frame(ipv4(17, "10.0.0.53", udp)) == ("udp", "127.0.0.1:5353", "10.0.0.53:53")
    v6 = LO_HEADER_V6 + bytes([0x60, 0, 0, 0, 0, 20, 6, 64]) + socket.inet_pton(socket.AF_INET6, "::1")
    v6 += socket.inet_pton(socket.AF_INET6, "2001:db8::1") + tcp(443, 0x02)
    assert parse_frame(v6) == ("tcp", "[::1]:40000", "[2001:db8::1]:443")
    assert parse_frame(LO_HEADER_V4[:10]) is None


def test_a_capture_that_dropped_a_packet_proves_nothing() -> None:
    watch = PacketWatch(socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))  # bound to nothing: sees nothing
    watch.sightings.append(Sighting(10.0, MODEL))
    assert watch.use(0.0, 20.0).clean
    watch.drops = 3
    use = watch.use(0.0, 20.0)
    assert not use.clean and "dropped 3 packets" in use.explain()
    assert watch.use(11.0, 20.0).explain().startswith("INCONCLUSIVE")  # outside the window: no model seen
    watch.sock.close()


REACHES = f"""
import socket
def attempt(family, kind, address):
    s = socket.socket(family, kind)
    try:
        s.sendto(b"?", address) if kind == socket.SOCK_DGRAM else s.connect(address)
    except OSError as error:
        print(address, error.strerror)
    s.close()
attempt(socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", {BRIDGE_PORT}))
for target in __import__("sys").argv[1:]:
    host, port = target.rsplit(":", 1)
    kind = socket.SOCK_DGRAM if port == "53" else socket.SOCK_STREAM
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    attempt(family, kind, (host.strip("[]"), int(port)))
"""


def run_in_pod(tmp_path: Path, *targets: str) -> tuple[str, str]:
    """A job (python, no agent) in a pod watched by packets, reaching the model and `targets`; what was seen."""
    records = tmp_path / "records"
    records.mkdir()
    paths = JobPaths("a", tmp_path, tmp_path, None, None)
    job = Job("a", paths, [sys.executable, "-c", REACHES, *targets], {"PATH": "/usr/bin:/bin"}, [], [])
    with Pod(tmp_path / "model.sock", records, packets=True) as pod:
        started = time.time()
        outcome = run_job(job, tmp_path / "model.sock", tmp_path / "job.log", 30.0, None, pod=pod)
        assert outcome.exit_code == 0, outcome.transcript.read_text()
        assert pod.packets is not None
        use = pod.packets.use(started, time.time())
    return use.explain(), outcome.transcript.read_text()


def test_every_attempt_is_seen_and_none_leaves(tmp_path: Path) -> None:
    seen, said = run_in_pod(tmp_path, "1.2.3.4:443", "10.0.0.53:53", "[2001:db8::1]:443")
    assert "reached beyond the scripted model" in seen
    for target in ("1.2.3.4:443", "10.0.0.53:53", "[2001:db8::1]:443"):
        assert target in seen
    assert "Network is unreachable" not in said  # every address is the namespace's own: refused at once


def test_the_model_alone_is_clean(tmp_path: Path) -> None:
    seen, _ = run_in_pod(tmp_path)
    assert seen.startswith("the scripted model only (seen by a packet capture")


def test_the_capture_is_out_of_the_jobs_reach(tmp_path: Path) -> None:
    """The capture is a socket of the harness's own process: a job that kills what it sees leaves it running."""
    others = "[int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) > 1 and int(p) != os.getpid()]"
    kill_all = [sys.executable, "-c", f"import os, signal\nfor pid in {others}: os.kill(pid, signal.SIGKILL)"]
    records = tmp_path / "records"
    records.mkdir()
    paths = JobPaths("a", tmp_path, tmp_path, None, None)
    with Pod(tmp_path / "model.sock", records, packets=True) as pod:
        killer = Job("a", paths, kill_all, {"PATH": "/usr/bin:/bin"}, [], [])
        run_job(killer, tmp_path / "model.sock", tmp_path / "kill.log", 30.0, None, pod=pod)
        started = time.time()
        job = Job("a", paths, [sys.executable, "-c", REACHES, "1.2.3.4:443"], {"PATH": "/usr/bin:/bin"}, [], [])
        run_job(job, tmp_path / "model.sock", tmp_path / "job.log", 30.0, None, pod=pod)
        assert pod.packets is not None
        assert "1.2.3.4:443" in pod.packets.use(started, time.time()).explain()


@pytest.mark.parametrize(
    ("reroute", "named"),
    [
        ("ip route del local 0.0.0.0/0 dev lo table local", "no `local default dev lo` for ip -4"),
        ("ip route add blackhole 1.2.3.4/32", "`blackhole 1.2.3.4"),
        ("ip -6 route add prohibit 2001:db8::1/128", "`prohibit 2001:db8::1"),
    ],
)
def test_a_job_that_reroutes_leaves_a_capture_that_proves_nothing(tmp_path: Path, reroute: str, named: str) -> None:
    """Root in its namespace, a job may delete the routes that make every attempt a packet, or send an address
    where no packet is seen: then the capture proves nothing, and says which route."""
    records = tmp_path / "records"
    records.mkdir()
    paths = JobPaths("a", tmp_path, tmp_path, None, None)
    with Pod(tmp_path / "model.sock", records, packets=True) as pod:
        started = time.time()
        job = Job("a", paths, ["bash", "-c", reroute], {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, [], [])
        assert run_job(job, tmp_path / "model.sock", tmp_path / "job.log", 30.0, None, pod=pod).exit_code == 0
        assert pod.packets is not None
        use = pod.packets.use(started, time.time())
    assert not use.clean and "no longer routes every address to lo" in use.explain()
    assert named in use.explain(), use.explain()
