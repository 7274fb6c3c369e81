"""The network trace on real syscalls: a resolver's address sorting is no reach; a datagram or a connection is."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from paths import TESTS

from boundary.jobs.job import run_job
from boundary.jobs.nettrace import read_trace
from boundary.results import NetworkUse
from boundary.results.network import BRIDGE_PORT
from boundary.runners.contract import Job, JobPaths
from boundary.toolchain import tools

STOCK_HOSTS = TESTS / "stock_etc/debian-hosts"

# The model first (every job talks to it), then what the test asks: `resolve` looks `localhost` up as every client
# does (glibc's getaddrinfo, which sorts the addresses), `udp`/`tcp` send to or connect to HOST:PORT, `uring` sets
# up an io_uring (a channel no syscall trace sees).
SECRET = b"what-a-job-sent-7d1c"  # what a datagram carries: never copied into the harness's trace
PROGRAM = f"""
import socket, sys
SECRET = {SECRET!r}
socket.create_connection(("127.0.0.1", {BRIDGE_PORT})).close()
for what in sys.argv[1:]:
    if what == "resolve":
        print(sorted({{a[4][0] for a in socket.getaddrinfo("localhost", None)}}))
        continue
    if what == "mmsg":  # one sendmmsg(2) of 40 datagrams, each to its own port
        import ctypes, struct
        class Message(ctypes.Structure):  # struct mmsghdr: msghdr's name, namelen, then its zeroes and msg_len
            _fields_ = [("name", ctypes.c_char_p), ("namelen", ctypes.c_uint), ("rest", ctypes.c_uint64 * 6)]
        names = [struct.pack("=H", socket.AF_INET) + struct.pack("!H4s8x", 6000 + i, bytes([127, 0, 0, 1]))
                 for i in range(40)]
        messages = (Message * 40)(*[Message(name, 16) for name in names])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        print("sendmmsg:", ctypes.CDLL(None).sendmmsg(s.fileno(), messages, 40, 0))
        continue
    if what == "uring":  # io_uring_setup(8, params): 425 on every architecture
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        ring = libc.syscall(425, 8, ctypes.create_string_buffer(120))
        print("io_uring_setup:", ring if ring >= 0 else os.strerror(ctypes.get_errno()))
        continue
    kind, _, target = what.partition(":")
    host, _, port = target.rpartition(":")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM)
    try:
        s.connect((host.strip("[]"), int(port)))
        if kind == "udp":
            s.send(SECRET)
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


def test_the_trace_holds_no_byte_a_job_sent_or_wrote(tmp_path: Path) -> None:
    """A job of a pod can read another job's strace's open trace (/proc/PID/fd): it must hold no canary."""
    secret = SECRET.decode()
    use, said = traced(tmp_path, "udp:127.0.0.1:5353", setup=f"echo {secret} > written; cat written")
    assert secret in said and use.foreign == ["127.0.0.1:5353"], use.explain()
    assert secret not in (tmp_path / "records/a.strace").read_text()


def test_every_datagram_of_a_long_sendmmsg_is_named(tmp_path: Path) -> None:
    """strace shows a vector's first 32 messages unless told not to abridge it: the 33rd on would go unseen."""
    use, said = traced(tmp_path, "mmsg")
    assert "sendmmsg: 40" in said, said
    assert use.foreign == sorted(f"127.0.0.1:{6000 + i}" for i in range(40)), use.explain()


def test_a_connection_to_ipv6_loopback_is_named(tmp_path: Path) -> None:
    use, _ = traced(tmp_path, "tcp:[::1]:8317")
    assert not use.clean and use.foreign == ["[::1]:8317"], use.explain()


# bash's /dev/udp: a connected datagram socket, and the datagram leaves by write(2) (bash dups fd 3 onto stdout).
WRITE_A_DATAGRAM = "exec 3>/dev/udp/127.0.0.1/9; echo x >&3; exec 3>&-"


def test_a_datagram_written_to_a_connected_socket_is_named(tmp_path: Path) -> None:
    use, _ = traced(tmp_path, setup=WRITE_A_DATAGRAM)
    assert not use.clean and use.foreign == ["127.0.0.1:9"], use.explain()
    assert "127.0.0.1:9 (by pid" in use.explain() and "bash" in use.explain()


def test_a_real_resolvers_sort_stays_clean_beside_a_written_datagram(tmp_path: Path) -> None:
    """getent (glibc) sorts localhost's two stock addresses with a connect each and prints through a pipe: none of
    it counts, while the datagram bash writes beside it does."""
    setup = f"mount --bind {STOCK_HOSTS} /etc/hosts; getent ahosts localhost | cat; {WRITE_A_DATAGRAM}"
    use, said = traced(tmp_path, setup=setup)
    assert "::1" in said and "127.0.0.1" in said, said
    assert use.foreign == ["127.0.0.1:9"], use.explain()


def test_an_io_uring_cannot_be_set_up_and_node_still_runs(tmp_path: Path) -> None:
    """A ring would send out of the trace's sight: under the watch its setup fails (ENOSYS), and Node, whose libuv
    sets one up at start on this kind of host, falls back to plain calls and writes its file."""
    # the Node the harness brings (the pinned wheel's): a fresh host has no other
    script = "require('fs').writeFile('from-node', 'y', e => { if (e) throw e })"
    node = f"{tools.node()} -e {shlex.quote(script)}"
    use, said = traced(tmp_path, "uring", setup=f"{node} && cat from-node && echo ' from node'")
    assert "io_uring_setup: Function not implemented" in said, said
    assert "y from node" in said, said
    assert use.clean, use.explain()
