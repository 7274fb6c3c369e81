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
    sent = '200 sendto(7<UDP:[4242]>, "x", 1, 0, NULL, 0) = 1\n'
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
