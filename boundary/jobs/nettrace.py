"""Prove a job touched no network: read the strace of its whole process tree.

Every AF_INET/AF_INET6 destination a job's processes tried to reach must be the scripted model's bridge on
loopback. Every job talks to that bridge, so a trace that does not show it (or is missing, or empty) proves
nothing and is never clean.

What counts as trying to reach a destination: a stream (or unknown) socket's connect, succeeded or not; a
datagram sent to it by any call that sends (sendto/sendmsg/sendmmsg with its address; those or
write/writev/pwritev2/sendfile/splice on a socket connected to it); a datagram socket's connect that failed for
an address off loopback (where a route would have let the datagram follow). A datagram socket's connect by
itself sends nothing: a resolver sorting a name's addresses (RFC 6724) connects one to each candidate to learn
its source address, so a stock /etc/hosts that gives `localhost` both 127.0.0.1 and ::1 shows `127.0.0.1:0` and
`[::1]:0` from every program that looks the name up. strace's `-yy` names the socket each call acts on
(`5<UDP:[…]>`, with `src->peer` once connected), which tells the two apart and keeps writes to files and pipes
out; a socket it cannot name counts as a stream, and a datagram whose peer is unknown counts every peer seen.

What no syscall trace sees: an io_uring, or Linux AIO's io_submit, sends without a send call. strace fails every
io_uring_setup and io_setup (netns.STRACE: libuv, Node's, falls back to plain calls), and a ring or AIO context set
up anyway makes the trace prove nothing. A call strace began and never finished (`<unfinished ...>`, its process
killed) counts as made.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from boundary.results.network import NetworkUse

_INET = re.compile(r'sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sa_family=AF_INET6, sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
_UNIX = re.compile(r'sa_family=AF_UNIX, sun_path=@?"([^"]+)"')
_EXECVE = re.compile(r'^execve\("([^"]+)"')
_LINE_PID = re.compile(r"^(\d+)\s")
# The fd a call connects or sends on, and how `strace -yy` names it: `connect(5<UDP:[19464]>, {…`,
# `write(1<UDP:[127.0.0.1:40123->127.0.0.1:9]>, "x\n", 2)`; a file is `3</path>` (`>` escaped), a pipe `4<pipe:[7]>`.
_FIRST_FD = re.compile(r"^(connect|sendto|sendmsg|sendmmsg|write|writev|pwritev2|sendfile)\((\d+)(?:<(.*?)>)?, ")
_SPLICED_TO = re.compile(r"^(splice)\(\d+(?:<.*?>)?, (?:NULL|\[.*?\]), (\d+)(?:<(.*?)>)?, ")  # its third argument
_ADDRESSED = frozenset({"connect", "sendto", "sendmsg", "sendmmsg"})  # calls that may name a destination
_SOCKET = re.compile(r"^([A-Za-z][\w/.+-]*):\[(.*)\]$")  # `UDP:[…]`, `socket:[4242]` (kind unnamed), `pipe:[7]`
_DATAGRAM = frozenset({"UDP", "UDPv6", "UDPLITE", "UDPLITEv6"})
_UNNAMED = frozenset({"socket", ""})  # a socket strace could not name, or an fd it did not decode at all
_PEER = re.compile(r"->(\S+)$")  # the peer in a connected socket's `src->peer`
# a message sent to the socket's peer: sendto's `NULL, 0` address, or a sendmsg/sendmmsg message without a name
_TO_PEER = re.compile(r"msg_name=NULL|, NULL, 0(?:\)|$)")
_FAILED = re.compile(r"\)\s+= -1 ")
_BAD_FD = re.compile(r"\)\s+= -1 EBADF ")
_RING = re.compile(r"^(io_uring_setup|io_setup)\(")  # an io_uring, or Linux AIO's context: sends unseen
_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^<\.\.\. \w+ resumed>")


def read_trace(path: Path) -> NetworkUse:
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return _unreadable(f"the trace {path} is unreadable ({error.strerror}), so it proves nothing (did strace run?)")
    if not text.strip():
        return _unreadable(f"the trace {path} is empty, so it proves nothing (did strace run?)")
    reached = _Attempts()
    for pid, call in _calls(text):
        reached.read(pid, call)
    unix = frozenset(_UNIX.findall(text))
    return NetworkUse(frozenset(reached.by), unix, reached.unseen(), by=tuple(reached.by.items()))


def _calls(text: str) -> Iterator[tuple[str, str]]:
    """(pid, the whole call) of each line, a call strace split (`<unfinished ...>`, `<... resumed>`) joined. A call
    never resumed (its process killed in it, or its pid reused) is still a call: it may have sent."""
    unfinished: dict[str, str] = {}
    for line in text.splitlines():
        pid = _LINE_PID.match(line)
        if pid is None:
            continue
        call = line[pid.end() :].lstrip()
        if call.endswith(_UNFINISHED):
            if pid.group(1) in unfinished:
                yield pid.group(1), unfinished[pid.group(1)]
            unfinished[pid.group(1)] = call.removesuffix(_UNFINISHED)
            continue
        resumed = _RESUMED.match(call)
        if resumed:
            call = unfinished.pop(pid.group(1), "") + call[resumed.end() :]
        yield pid.group(1), call
    yield from unfinished.items()


@dataclass
class _Attempts:
    """Each destination a job tried to reach, with the program that tried first (its latest execve)."""

    by: dict[str, str] = field(default_factory=dict)
    running: dict[str, str] = field(default_factory=dict)  # pid -> program
    connected: dict[tuple[str, str], str] = field(default_factory=dict)  # (pid, fd) -> a socket's peer
    # socket inode -> peer: a socket in a network namespace the job made is named by inode alone (`UDP:[64534]`)
    connected_inode: dict[str, str] = field(default_factory=dict)
    ever_connected: set[str] = field(default_factory=set)  # every datagram socket's peer, for the unknown ones
    rings: list[str] = field(default_factory=list)  # who set up an io_uring

    def read(self, pid: str, call: str) -> None:
        executed = _EXECVE.match(call)
        if executed:
            self.running[pid] = executed.group(1)
        elif _RING.match(call):
            if not _FAILED.search(call):
                self.rings.append(self._who(pid))
        elif target := _FIRST_FD.match(call) or _SPLICED_TO.match(call):
            name, fd, decoded = target.groups()
            kind, info = _kind(decoded)
            if name == "connect":
                self._connect(pid, call, fd, kind, info)
            else:
                self._send(pid, call, name, fd, kind, info)

    def _connect(self, pid: str, call: str, fd: str, kind: str, info: str) -> None:
        destinations = _destinations(call)
        failed = _FAILED.search(call) is not None
        if not failed:  # where this socket's later sends go, if strace cannot name its peer then
            self.connected[(pid, fd)] = destinations[0] if destinations else ""  # AF_UNSPEC: no peer any more
            if info.isdigit():
                self.connected_inode[info] = self.connected[(pid, fd)]
        if kind not in _DATAGRAM:  # a stream's connect reaches out; so does one strace could not name
            self._add(pid, destinations)
        elif not failed:
            self.ever_connected.update(destinations)
        else:  # refused for want of a route: where one exists, its datagrams would follow
            self._add(pid, [d for d in destinations if not _loopback(d)])

    def _send(self, pid: str, call: str, name: str, fd: str, kind: str, info: str) -> None:
        destinations = _destinations(call) if name in _ADDRESSED else []
        self._add(pid, destinations)  # an address named (a datagram, or a stream's TCP Fast Open)
        to_peer = not destinations or _TO_PEER.search(call) is not None
        if to_peer and (kind in _DATAGRAM or (kind in _UNNAMED and not _BAD_FD.search(call))):
            self._add(pid, self._peers(pid, fd, info))
        # else a file, a pipe, a local socket, or a stream whose connect counted already

    def _peers(self, pid: str, fd: str, info: str) -> list[str]:
        """Where a datagram sent without an address went: the peer strace names, or the socket's connect; when
        neither is known (a socket connected by another process), every datagram socket's peer — fail closed."""
        peer = _PEER.search(info)
        if peer:
            return [peer.group(1)]
        known = self.connected_inode.get(info) if info.isdigit() else None
        known = known or self.connected.get((pid, fd))
        return [known] if known else sorted(self.ever_connected)

    def _add(self, pid: str, destinations: list[str]) -> None:
        for destination in destinations:
            self.by.setdefault(destination, self._who(pid))

    def _who(self, pid: str) -> str:
        return f"pid {pid}, {self.running.get(pid, 'a program started before')}"

    def unseen(self) -> str | None:
        """Why some of what the job sent is out of the trace's sight (None: nothing is)."""
        if not self.rings:
            return None
        return (
            f"an io_uring or AIO context was set up (by {'; '.join(self.rings)}) although strace fails every "
            "io_uring_setup and io_setup: "
            "what a ring sends no syscall trace sees, so the trace proves nothing"
        )


def _kind(decoded: str | None) -> tuple[str, str]:
    """(kind, what strace says of it) of an fd as `-yy` decodes it: ("UDP", "a->b"); ("", "") when undecoded."""
    if decoded is None:
        return "", ""
    socket = _SOCKET.match(decoded)
    return (socket.group(1), socket.group(2)) if socket else ("file", "")


def _destinations(call: str) -> list[str]:
    found = [f"{host}:{port}" for port, host in _INET.findall(call)]
    return found + [f"[{host}]:{port}" for port, host in _INET6.findall(call)]


def _loopback(destination: str) -> bool:
    host = destination.rpartition(":")[0].strip("[]")
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _unreadable(problem: str) -> NetworkUse:
    return NetworkUse(frozenset(), frozenset(), problem)
