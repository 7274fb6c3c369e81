"""The network trace fails closed: a trace that cannot show the model's connection proves nothing."""

from __future__ import annotations

from pathlib import Path

from boundary.jobs.nettrace import read_trace
from boundary.results.network import MODEL

MODEL_CONNECT = (
    '26 connect(20, {sa_family=AF_INET, sin_port=htons(4010), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS\n'
)
UNIX_ONLY = '13 connect(20, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT\n'


def test_the_model_alone_is_clean(tmp_path: Path) -> None:
    (tmp_path / "t").write_text(MODEL_CONNECT + UNIX_ONLY)
    use = read_trace(tmp_path / "t")
    assert use.clean and use.inet == {MODEL} and use.problem is None
    assert "scripted model only" in use.explain()


def test_a_trace_without_the_model_is_not_clean(tmp_path: Path) -> None:
    """Every job talks to the scripted model: a trace that does not show it saw nothing at all."""
    (tmp_path / "t").write_text(UNIX_ONLY)
    use = read_trace(tmp_path / "t")
    assert not use.clean and use.foreign == []
    assert use.explain().startswith("INCONCLUSIVE: the trace shows no connection to the scripted model")


def test_an_empty_trace_is_not_clean(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("")
    use = read_trace(tmp_path / "t")
    assert not use.clean and "INCONCLUSIVE" in use.explain() and "empty" in use.explain()


def test_a_missing_trace_is_not_clean_and_does_not_crash(tmp_path: Path) -> None:
    use = read_trace(tmp_path / "absent")
    assert not use.clean and use.inet == frozenset() and use.unix == frozenset()
    assert use.problem is not None and "absent" in use.problem
    assert use.explain().startswith("INCONCLUSIVE:")


def test_a_foreign_peer_is_named_even_without_the_model(tmp_path: Path) -> None:
    dns = '13 connect(20, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.53")}, 16) = -1\n'
    (tmp_path / "t").write_text(dns)
    use = read_trace(tmp_path / "t")
    assert not use.clean and "10.0.0.53:53" in use.explain()


def test_a_foreign_peer_is_named_with_the_program_that_reached_for_it(tmp_path: Path) -> None:
    execve = '31 execve("/usr/bin/socat", ["socat", "TCP:127.0.0.1:41845"], 0x7ffc /* 9 vars */) = 0\n'
    reach = '31 connect(5, {sa_family=AF_INET, sin_port=htons(41845), sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
    (tmp_path / "t").write_text(MODEL_CONNECT + execve + reach)
    use = read_trace(tmp_path / "t")
    assert not use.clean and "127.0.0.1:41845 (by pid 31, /usr/bin/socat)" in use.explain()


def _address(address: str, port: int) -> str:
    """A sockaddr as strace prints it."""
    if ":" not in address:
        return f'{{sa_family=AF_INET, sin_port=htons({port}), sin_addr=inet_addr("{address}")}}, 16'
    pton = f'inet_pton(AF_INET6, "{address}", &sin6_addr)'
    return f"{{sa_family=AF_INET6, sin6_port=htons({port}), sin6_flowinfo=htonl(0), {pton}, sin6_scope_id=0}}, 28"


def _udp(pid: int, fd: int, address: str, port: int, result: str = "0") -> str:
    kind = "UDPv6" if ":" in address else "UDP"
    return f"{pid} connect({fd}<{kind}:[4242]>, {_address(address, port)}) = {result}\n"


# glibc's getaddrinfo("localhost") under a stock Debian /etc/hosts (127.0.0.1 and ::1): RFC 6724 sorting connects a
# datagram socket to each address to learn its source address, and sends nothing (recorded from opencode's reach job).
RESOLVER_SORT = _udp(116, 5, "127.0.0.1", 0) + _udp(116, 5, "::1", 0)
TCP_MODEL = (
    '26 connect(20<TCP:[1]>, {sa_family=AF_INET, sin_port=htons(4010), sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
)


def test_a_resolver_sorting_addresses_reaches_nothing(tmp_path: Path) -> None:
    """A datagram socket connected and never used sends nothing: a stock /etc/hosts is no finding."""
    (tmp_path / "t").write_text(TCP_MODEL + RESOLVER_SORT)
    use = read_trace(tmp_path / "t")
    assert use.clean, use.explain()


def test_a_failed_sort_probe_on_loopback_reaches_nothing(tmp_path: Path) -> None:
    """With IPv6 off, the connect to ::1 fails: nothing was sent, and no route would have taken it anywhere."""
    (tmp_path / "t").write_text(
        TCP_MODEL + _udp(116, 5, "::1", 0, "-1 EADDRNOTAVAIL (Cannot assign requested address)")
    )
    assert read_trace(tmp_path / "t").clean


def test_a_datagram_on_a_connected_socket_reaches_its_peer(tmp_path: Path) -> None:
    """send() on a connected datagram socket: the peer is named from strace's -yy, or from the connect."""
    named = '116 sendto(5<UDP:[127.0.0.1:39742->127.0.0.1:5353]>, "x", 1, 0, NULL, 0) = 1\n'
    (tmp_path / "t").write_text(TCP_MODEL + _udp(116, 5, "127.0.0.1", 5353) + named)
    assert read_trace(tmp_path / "t").foreign == ["127.0.0.1:5353"]
    unnamed = "116 sendmmsg(5<UDPv6:[4242]>, [{msg_hdr={msg_name=NULL, msg_namelen=0}, msg_len=1}], 1, 0) = 1\n"
    (tmp_path / "t").write_text(TCP_MODEL + _udp(116, 5, "::1", 53) + unnamed)
    assert read_trace(tmp_path / "t").foreign == ["[::1]:53"]


def test_a_datagram_on_a_socket_connected_elsewhere_counts_every_peer(tmp_path: Path) -> None:
    """A socket another process connected (its peer unknown here) sends to any datagram peer seen: fail closed."""
    sent = '200 sendto(7<UDP:[4343]>, "x", 1, 0, NULL, 0) = 1\n'  # a socket whose connect is not in sight
    (tmp_path / "t").write_text(TCP_MODEL + RESOLVER_SORT + sent)
    assert read_trace(tmp_path / "t").foreign == ["127.0.0.1:0", "[::1]:0"]


def test_a_datagram_to_an_address_and_a_refused_route_count(tmp_path: Path) -> None:
    sendto = f'9 sendto(3<UDP:[1]>, "q", 1, 0, {_address("127.0.0.1", 53)}) = 1\n'
    unrouted = _udp(9, 4, "10.0.0.2", 53, "-1 ENETUNREACH (Network is unreachable)")
    (tmp_path / "t").write_text(TCP_MODEL + sendto + unrouted)
    assert read_trace(tmp_path / "t").foreign == ["10.0.0.2:53", "127.0.0.1:53"]


def test_a_stream_connect_counts_split_or_not(tmp_path: Path) -> None:
    """A TCP connect counts whatever its result; strace's `<unfinished ...>` halves are joined."""
    split = (
        f"7 connect(4<TCPv6:[9]>, {_address('::1', 8080)} <unfinished ...>\n"
        '8 execve("/bin/true", [], 0x0) = 0\n'
        "7 <... connect resumed>) = -1 ECONNREFUSED (Connection refused)\n"
    )
    (tmp_path / "t").write_text(TCP_MODEL + split)
    assert read_trace(tmp_path / "t").foreign == ["[::1]:8080"]


# Captured from this host's strace 6.1 under netns.STRACE: bash's `exec 3>/dev/udp/127.0.0.1/9; echo x >&3` (the
# datagram leaves by write(2) on a connected socket, dup'ed to fd 1), beside writes to a pipe and to a file.
UDP_BY_WRITE = (
    "1399  connect(3<UDP:[346640]>, {sa_family=AF_INET, sin_port=htons(9), "
    'sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
    '1399  write(1<UDP:[127.0.0.1:51666->127.0.0.1:9]>, "x\\n", 2) = 2\n'
)
NOT_SOCKETS = (
    '1400  write(1<pipe:[346619]>, "::1             STREAM localhost"..., 153) = 153\n'
    '1401  write(1</dev/null<char 1:3>>, "::1             STREAM localhost"..., 153) = 153\n'
    '1399  write(1</tmp/nt/a\\76, b>, "hi\\n", 3) = 3\n'
    '31  write(4<UNIX-STREAM:[64541]>, "y", 1) = 1\n'
    '26  write(20<TCP:[127.0.0.1:52000->127.0.0.1:4010]>, "POST /v1/chat/completions"..., 512) = 512\n'
)
# `getent ahosts localhost` under the stock Debian /etc/hosts (tests/stock_etc/debian-hosts), same capture: the
# RFC 6724 sort connects a datagram socket to each address, sends nothing, and prints through a pipe.
GETENT_SORT = (
    "1400  connect(3<UDP:[346632]>, {sa_family=AF_INET, sin_port=htons(0), "
    'sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
    "1400  connect(3<UDPv6:[346634]>, {sa_family=AF_INET6, sin6_port=htons(0), sin6_flowinfo=htonl(0), "
    'inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0\n'
)


def test_a_datagram_written_to_a_connected_socket_reaches_its_peer(tmp_path: Path) -> None:
    """write(2) sends a datagram as surely as send(2) (bash's /dev/udp, `nc -u`); writes to files, pipes, local
    sockets and the model's own stream are no reach."""
    (tmp_path / "t").write_text(TCP_MODEL + NOT_SOCKETS + UDP_BY_WRITE)
    use = read_trace(tmp_path / "t")
    assert use.foreign == ["127.0.0.1:9"], use.explain()
    assert "127.0.0.1:9 (by pid 1399" in use.explain()


def test_the_resolvers_sort_stays_clean_beside_a_written_datagram(tmp_path: Path) -> None:
    """The resolver's connect-without-send is still no reach once writes are traced: only the written peer counts."""
    (tmp_path / "t").write_text(TCP_MODEL + GETENT_SORT + NOT_SOCKETS + UDP_BY_WRITE)
    assert read_trace(tmp_path / "t").foreign == ["127.0.0.1:9"]
    (tmp_path / "t").write_text(TCP_MODEL + GETENT_SORT + NOT_SOCKETS)
    assert read_trace(tmp_path / "t").clean


def test_every_call_that_sends_on_a_connected_datagram_socket_counts(tmp_path: Path) -> None:
    """writev, pwritev2 (offset -1 is a plain writev), sendfile and splice into the socket (splice's third argument)."""
    to = "UDP:[127.0.0.1:53045->PEER]"
    calls = {
        "10.0.0.1:53": f'writev(3<{to}>, [{{iov_base="x", iov_len=1}}], 1) = 1',
        "10.0.0.2:53": f'pwritev2(3<{to}>, [{{iov_base="x", iov_len=1}}], 1, -1, 0) = 1',
        "10.0.0.3:53": f"sendfile(3<{to}>, 4</tmp/nt/src>, [0] => [3], 3) = 3",
        "10.0.0.4:53": f"splice(5<pipe:[64219]>, NULL, 3<{to}>, NULL, 3, 0) = 3",
    }
    for peer, call in calls.items():
        (tmp_path / "t").write_text(TCP_MODEL + "9  " + call.replace("PEER", peer) + "\n")
        assert read_trace(tmp_path / "t").foreign == [peer], call
    spliced_from = "9  splice(3<UDP:[127.0.0.1:53045->10.0.0.5:53]>, NULL, 5<pipe:[64219]>, NULL, 3, 0) = 3\n"
    (tmp_path / "t").write_text(TCP_MODEL + spliced_from + UDP_BY_WRITE)
    assert read_trace(tmp_path / "t").foreign == ["127.0.0.1:9"]  # read from a socket: nothing sent


def test_a_datagram_written_in_a_namespace_of_the_jobs_own_finds_its_peer_by_inode(tmp_path: Path) -> None:
    """In a network namespace the job made (srt's shell under bwrap) strace names a socket by inode alone: the
    write's peer is that socket's connect, even through another fd (captured under `unshare -n`)."""
    inner = (
        "19989 connect(3<UDP:[64534]>, {sa_family=AF_INET, sin_port=htons(9), "
        'sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
        '19989 write(1<UDP:[64534]>, "x\\n", 2)   = 2\n'
    )
    (tmp_path / "t").write_text(TCP_MODEL + GETENT_SORT + inner)
    assert read_trace(tmp_path / "t").foreign == ["127.0.0.1:9"]


def test_a_call_never_resumed_is_not_dropped(tmp_path: Path) -> None:
    """A process killed inside a call leaves only its `<unfinished ...>` half: the call was made, so it counts. A pid
    reused by a later process does not lose the first call either."""
    killed = (
        f"7 connect(4<TCP:[9]>, {_address('10.1.2.3', 443)} <unfinished ...>\n"
        "7 +++ killed by SIGKILL +++\n"
        '8 write(3<UDP:[127.0.0.1:51666->10.9.9.9:53]>, "q", 1 <unfinished ...>\n'
        "8 +++ killed by SIGKILL +++\n"
        f"8 connect(5<TCP:[10]>, {_address('10.4.5.6', 80)} <unfinished ...>\n"
        "8 <... connect resumed>) = -1 ENETUNREACH (Network is unreachable)\n"
    )
    (tmp_path / "t").write_text(TCP_MODEL + killed)
    assert read_trace(tmp_path / "t").foreign == ["10.1.2.3:443", "10.4.5.6:80", "10.9.9.9:53"]


IO_URING = "io_uring_setup(64, {flags=IORING_SETUP_SQPOLL, sq_thread_cpu=0, sq_thread_idle=10, sq_entries=64}) = "


def test_an_io_uring_makes_the_trace_prove_nothing(tmp_path: Path) -> None:
    """A ring sends with no syscall per send. strace fails every setup (Node's libuv then uses plain calls): a failed
    setup is no channel; one that succeeded (or was never seen to end) is out of the trace's sight."""
    (tmp_path / "t").write_text(TCP_MODEL + f"12 {IO_URING}-1 ENOSYS (Function not implemented) (INJECTED)\n")
    assert read_trace(tmp_path / "t").clean
    for ending in ("4<anon_inode:[io_uring]>", "?", "<unfinished ...>"):
        trace = TCP_MODEL + '12 execve("/usr/bin/node", ["node"], 0x0 /* 9 vars */) = 0\n' + f"12 {IO_URING}{ending}\n"
        (tmp_path / "t").write_text(trace.replace("= <unfinished", "<unfinished"))
        use = read_trace(tmp_path / "t")
        assert not use.clean and use.explain().startswith("INCONCLUSIVE: an io_uring or AIO context was set up"), ending
        assert "pid 12, /usr/bin/node" in use.explain()


def test_a_message_without_a_name_beside_named_ones_goes_to_the_peer(tmp_path: Path) -> None:
    """One sendmmsg may name an address for some messages and leave others to the socket's peer: both count."""
    named = "msg_hdr={msg_name=" + _address("127.0.0.1", 5353).removesuffix(", 16") + ", msg_namelen=16}"
    mixed = (
        f"5 sendmmsg(3<UDP:[1.2.3.4:40000->10.0.0.53:53]>, [{{{named}}}, {{msg_hdr={{msg_name=NULL}}}}], 2, 0) = 2\n"
    )
    (tmp_path / "t").write_text(TCP_MODEL + mixed)
    assert read_trace(tmp_path / "t").foreign == ["10.0.0.53:53", "127.0.0.1:5353"]
    sendto = f'5 sendto(3<UDP:[1.2.3.4:40000->10.0.0.53:53]>, ""..., 1, 0, {_address("127.0.0.1", 5353)}) = 1\n'
    (tmp_path / "t").write_text(TCP_MODEL + sendto)
    assert read_trace(tmp_path / "t").foreign == ["127.0.0.1:5353"]  # an address named: not the peer's


def test_a_linux_aio_context_makes_the_trace_prove_nothing(tmp_path: Path) -> None:
    """io_submit writes to a connected UDP socket with no send call (the review of issue 56): every io_setup fails
    under strace's injection, and one that succeeded anyway leaves the trace proving nothing."""
    (tmp_path / "t").write_text(
        TCP_MODEL + "12 io_setup(128, 0x7ffd) = -1 ENOSYS (Function not implemented) (INJECTED)\n"
    )
    assert read_trace(tmp_path / "t").clean
    (tmp_path / "t").write_text(TCP_MODEL + "12 io_setup(128, [0x7f2a1c000]) = 0\n")
    use = read_trace(tmp_path / "t")
    assert not use.clean and "AIO context was set up" in use.explain()
