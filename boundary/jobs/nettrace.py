"""Prove a job touched no network: read the strace of its whole process tree.

Every AF_INET/AF_INET6 destination a job's processes tried to reach must be the scripted model's bridge on
loopback. Every job talks to that bridge, so a trace that does not show it (or is missing, or empty) proves
nothing and is never clean.

What counts as trying to reach a destination: a stream (or unknown) socket's connect, succeeded or not; a
datagram sent to it (sendto/sendmsg/sendmmsg, with its address or on a socket connected to it); a datagram
socket's connect that failed for an address off loopback (where a route would have let the datagram follow). A
datagram socket's connect by itself sends nothing: a resolver sorting a name's addresses (RFC 6724) connects one
to each candidate to learn its source address, so a stock /etc/hosts that gives `localhost` both 127.0.0.1 and
::1 shows `127.0.0.1:0` and `[::1]:0` from every program that looks the name up. strace's `-yy` names each
socket's kind (`5<UDP:[…]>`), which is what tells the two apart; a socket it cannot name counts as a stream.
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
# connect/send* on a socket fd as `strace -yy` prints it: `connect(5<UDP:[19464]>, {…`; `<UDPv6:[::1:53->…]>`
_SOCKET_CALL = re.compile(r"^(connect|sendto|sendmsg|sendmmsg)\((\d+)(?:<([A-Za-z0-9]+):\[(.*?)\]>)?, ")
_DATAGRAM = frozenset({"UDP", "UDPv6", "UDPLITE", "UDPLITEv6"})
_PEER = re.compile(r"->(\S+)$")  # the peer in a connected socket's `src->peer`
_FAILED = re.compile(r"\)\s+= -1 ")
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
    return NetworkUse(frozenset(reached.by), frozenset(_UNIX.findall(text)), by=tuple(reached.by.items()))


def _calls(text: str) -> Iterator[tuple[str, str]]:
    """(pid, the whole call) of each line, a call strace split (`<unfinished ...>`, `<... resumed>`) joined."""
    unfinished: dict[str, str] = {}
    for line in text.splitlines():
        pid = _LINE_PID.match(line)
        if pid is None:
            continue
        call = line[pid.end() :].lstrip()
        if call.endswith(_UNFINISHED):
            unfinished[pid.group(1)] = call.removesuffix(_UNFINISHED)
            continue
        resumed = _RESUMED.match(call)
        if resumed:
            call = unfinished.pop(pid.group(1), "") + call[resumed.end() :]
        yield pid.group(1), call


@dataclass
class _Attempts:
    """Each destination a job tried to reach, with the program that tried first (its latest execve)."""

    by: dict[str, str] = field(default_factory=dict)
    running: dict[str, str] = field(default_factory=dict)  # pid -> program
    connected: dict[tuple[str, str], str] = field(default_factory=dict)  # (pid, fd) -> a datagram socket's peer
    ever_connected: set[str] = field(default_factory=set)  # every datagram socket's peer, for the unknown ones

    def read(self, pid: str, call: str) -> None:
        executed = _EXECVE.match(call)
        if executed:
            self.running[pid] = executed.group(1)
            return
        socket = _SOCKET_CALL.match(call)
        if socket is None:
            return
        name, fd, kind, info = socket.groups()
        destinations = _destinations(call)
        if kind not in _DATAGRAM:  # a stream's connect, or a send that names an address (TCP Fast Open)
            self._add(pid, destinations)
        elif name == "connect" and not _FAILED.search(call):
            self.connected[(pid, fd)] = destinations[0] if destinations else ""  # AF_UNSPEC: no peer any more
            self.ever_connected.update(destinations)
        elif name == "connect":  # refused for want of a route: where one exists, its datagrams would follow
            self._add(pid, [d for d in destinations if not _loopback(d)])
        elif destinations:
            self._add(pid, destinations)
        else:
            self._add(pid, self._peers(pid, fd, info))

    def _peers(self, pid: str, fd: str, info: str) -> list[str]:
        """Where a datagram sent without an address went: the peer strace names, or the socket's connect; when
        neither is known (a socket connected by another process), every datagram socket's peer — fail closed."""
        peer = _PEER.search(info)
        if peer:
            return [peer.group(1)]
        known = self.connected.get((pid, fd))
        return [known] if known else sorted(self.ever_connected)

    def _add(self, pid: str, destinations: list[str]) -> None:
        program = self.running.get(pid, "a program started before")
        for destination in destinations:
            self.by.setdefault(destination, f"pid {pid}, {program}")


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
