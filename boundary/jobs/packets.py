"""See a job's network use from outside it: the packets its namespace sends, for jobs ptrace cannot follow.

`strace -f` (nettrace.py) sees every connect of a job's processes, but a sandbox that ptraces its own
processes cannot run under it (gVisor's ptrace platform). For such a runner the job's namespace routes every
address to loopback (`local 0.0.0.0/0` and `local ::/0`): each attempt, wherever it was meant to go, becomes a
packet on `lo` that is refused at once and never leaves. A packet socket opened in that namespace by the
harness (outside the job's PID namespace, so no job can stop it) records every TCP SYN and UDP datagram. What
it cannot see: attempts made inside a network namespace the job makes for itself (they cannot leave it either),
and which program made each one.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import re
import socket
import struct
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from boundary.host import variant
from boundary.results import NetworkUse

# Every address is this namespace's own: nothing leaves, every attempt is a packet on lo.


def route_everything_to_loopback() -> str:
    """The routes that make every attempt a packet on lo (IPv6's only where it is on: `--host-ipv6 off`)."""
    return "ip route add local 0.0.0.0/0 dev lo\n" + (
        "" if variant.ipv6_off() else "ip -6 route add local ::/0 dev lo\n"
    )


_ETH_P_ALL = 0x0003
_SOL_PACKET = 263
_PACKET_STATISTICS = 6
_CLONE_NEWNET = 0x40000000
_SO_TIMESTAMPNS = 35
_SO_ATTACH_FILTER = 26
_PACKET_OUTGOING = 4
_SCM_TIMESTAMPNS = _SO_TIMESTAMPNS


def _filter() -> bytes:
    """A classic BPF program on lo's 14-byte link header: keep IPv4/IPv6 TCP SYNs without ACK, and the rest of
    IP that is not TCP (UDP, ICMP); drop everything else. The model's streamed answers never reach Python, so a
    busy harness does not overflow the socket's buffer (and a drop is counted, never ignored)."""
    ldh, ldb, ldb_ind, ldx_msh, jeq, ja, and_, ret = 0x28, 0x30, 0x50, 0xB1, 0x15, 0x05, 0x54, 0x06
    program = [
        (ldh, 0, 0, 12),  # 0: ethertype
        (jeq, 0, 5, 0x0800),  # 1: IPv4 -> 2, else -> 7
        (ldb, 0, 0, 23),  # 2: IPv4 protocol
        (jeq, 0, 9, 6),  # 3: TCP -> 4, else -> 13 (keep)
        (ldx_msh, 0, 0, 14),  # 4: X = IPv4 header length
        (ldb_ind, 0, 0, 27),  # 5: TCP flags (14 + X + 13)
        (ja, 0, 0, 4),  # 6: -> 11
        (jeq, 0, 6, 0x86DD),  # 7: IPv6 -> 8, else -> 14 (drop)
        (ldb, 0, 0, 20),  # 8: IPv6 next header
        (jeq, 0, 3, 6),  # 9: TCP -> 10, else -> 13 (keep)
        (ldb, 0, 0, 67),  # 10: TCP flags (14 + 40 + 13)
        (and_, 0, 0, 0x12),  # 11: SYN and ACK bits
        (jeq, 0, 1, 0x02),  # 12: SYN alone -> 13, else -> 14
        (ret, 0, 0, 0xFFFF),  # 13: keep
        (ret, 0, 0, 0),  # 14: drop
    ]
    return b"".join(struct.pack("HBBI", *instruction) for instruction in program)


def open_in(netns: Path) -> socket.socket:
    """A packet socket on `lo` of the network namespace at `netns` (e.g. /proc/PID/ns/net), filtered.

    Opened by a thread that enters the namespace and ends: a socket stays in the namespace it was made in,
    and the harness's other threads never leave their own."""
    made: list[socket.socket | BaseException] = []

    def enter_and_open() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            with open(netns, "rb") as handle:
                if libc.setns(handle.fileno(), _CLONE_NEWNET) != 0:
                    error = ctypes.get_errno()
                    raise OSError(error, f"setns into {netns}: {os.strerror(error)}")
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # protocol 0: nothing arrives yet
            sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, _sock_fprog())
            sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
            sock.bind(("lo", _ETH_P_ALL))  # from here on, every filtered packet on lo
            made.append(sock)
        except BaseException as error:  # handed to the caller's thread
            made.append(error)

    thread = threading.Thread(target=enter_and_open, name="boundary-packets-open")
    thread.start()
    thread.join()
    if isinstance(made[0], BaseException):
        raise made[0]
    return made[0]


_KEEP: list[ctypes.Array[ctypes.c_char]] = []  # the filter's bytes must outlive the setsockopt call


def _sock_fprog() -> bytes:
    """struct sock_fprog: the program's length and address."""
    program = _filter()
    buffer = ctypes.create_string_buffer(program)
    _KEEP.append(buffer)
    return struct.pack("HL", len(program) // 8, ctypes.addressof(buffer))


@dataclass
class Sighting:
    at: float  # the kernel's time of the packet (time.time() scale)
    destination: str  # host:port, IPv6 hosts in brackets


# What a namespace with only lo routes: addresses of its own, and broadcast or multicast on lo. A unicast route,
# a blackhole, `unreachable` or `prohibit` (shown with `dev lo` too) would take an address elsewhere.
_LOOPBACK_ROUTE = re.compile(r"(local|broadcast|multicast|anycast) \S+ dev lo\b")


def _ipv6_back_on(netns: Path) -> list[str]:
    """With IPv6 off (`--host-ipv6 off`) nothing routes it: a job that turns it back on could send unseen."""
    shown = subprocess.run(
        ["nsenter", f"--net={netns}", "sh", "-c", "cat /proc/sys/net/ipv6/conf/*/disable_ipv6"],
        capture_output=True,
        text=True,
        timeout=10,
        check=False,
    )
    return [] if set(shown.stdout.split()) == {"1"} else ["IPv6 turned back on, where nothing routes it to lo"]


def routing_problem(netns: Path) -> str | None:
    """Why the namespace no longer sends every attempt to lo as a packet, or None. A job with CAP_NET_ADMIN there
    may remove the `local default` routes, or add a route that takes an address elsewhere (a blackhole, a device
    of its own): its attempts there would leave no packet on lo."""
    wrong = [] if not variant.ipv6_off() else _ipv6_back_on(netns)
    for family in ("-4",) if variant.ipv6_off() else ("-4", "-6"):
        shown = subprocess.run(
            ["nsenter", f"--net={netns}", "ip", "-o", family, "route", "show", "table", "all"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        routes = shown.stdout.splitlines()
        if not any(re.match(r"local default dev lo\b", route) for route in routes):
            wrong.append(f"no `local default dev lo` for ip {family} ({shown.stderr.strip() or 'removed'})")
        wrong += [f"`{route.strip()}`" for route in routes if not _LOOPBACK_ROUTE.match(route)]
    if not wrong:
        return None
    return "the job's namespace no longer routes every address to lo, so attempts may leave no packet: " + "; ".join(
        wrong
    )


@dataclass
class PacketWatch:
    """Reads one namespace's packet socket on a thread of its own until stopped; answers per time window."""

    sock: socket.socket
    netns: Path | None = None  # checked for its routes at each answer while the namespace lives
    sightings: list[Sighting] = field(default_factory=list)
    drops: int = 0
    problem: str | None = None  # why the capture stopped early; None while it runs or once stopped cleanly
    _udp_sent: set[str] = field(default_factory=set)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def start(cls, netns: Path) -> PacketWatch:
        watch = cls(open_in(netns), netns)
        watch.sock.settimeout(0.2)
        watch._thread = threading.Thread(target=watch._read, name="boundary-packets", daemon=True)
        watch._thread.start()
        return watch

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        self._count_drops()
        self.sock.close()

    def use(self, since: float, until: float) -> NetworkUse:
        """What the namespace sent between `since` and `until` (time.time()), as a trace would say it. Asked while
        the namespace lives, it also checks the namespace still routes every address to lo."""
        routing = routing_problem(self.netns) if self.netns is not None and not self._stopping.is_set() else None
        with self._lock:
            seen = frozenset(s.destination for s in self.sightings if since <= s.at <= until)
            self._count_drops()
            problem = self.problem
            if self.drops:
                problem = f"the packet capture dropped {self.drops} packets, so it proves nothing"
            problem = problem or routing
        return NetworkUse(seen, frozenset(), problem, observed_by="packets")

    def _count_drops(self) -> None:
        if self.sock.fileno() < 0:
            return
        _, dropped = struct.unpack("II", self.sock.getsockopt(_SOL_PACKET, _PACKET_STATISTICS, 8))
        self.drops += dropped

    def _read(self) -> None:
        while not self._stopping.is_set():
            try:
                data, ancillary, _, address = self.sock.recvmsg(256, socket.CMSG_SPACE(16))
            except TimeoutError:
                continue
            except OSError as error:
                with self._lock:
                    self.problem = f"the packet capture stopped early ({error}), so it proves nothing"
                return
            if address[2] == _PACKET_OUTGOING:  # lo hands a tap each packet twice: as sent, and as received
                self._note(data, _kernel_time(ancillary))

    def _note(self, frame: bytes, at: float) -> None:
        parsed = parse_frame(frame)
        if parsed is None:
            return
        protocol, source, destination = parsed
        with self._lock:
            if protocol == "udp":
                if source in self._udp_sent:  # an answer to a datagram already seen
                    return
                self._udp_sent.add(destination)
            self.sightings.append(Sighting(at, destination))


def _kernel_time(ancillary: list[tuple[int, int, bytes]]) -> float:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == _SCM_TIMESTAMPNS and len(data) >= 16:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            return float(seconds + nanoseconds / 1e9)
    return time.time()


def parse_frame(frame: bytes) -> tuple[str, str, str] | None:
    """(tcp|udp, source, destination) of a TCP SYN or a UDP datagram on lo; None for anything else."""
    if len(frame) < 14:
        return None
    ethertype = struct.unpack_from("!H", frame, 12)[0]
    if ethertype == 0x0800 and len(frame) >= 34:
        header = (frame[14] & 0x0F) * 4
        protocol, source, destination = frame[23], frame[26:30], frame[30:34]
        hosts = str(ipaddress.IPv4Address(source)), str(ipaddress.IPv4Address(destination))
        return _endpoints(protocol, frame[14 + header :], *hosts)
    if ethertype == 0x86DD and len(frame) >= 54:
        source, destination = frame[22:38], frame[38:54]
        return _endpoints(
            frame[20],
            frame[54:],
            f"[{ipaddress.IPv6Address(source)}]",
            f"[{ipaddress.IPv6Address(destination)}]",
        )
    return None


def _endpoints(protocol: int, segment: bytes, source: str, destination: str) -> tuple[str, str, str] | None:
    if protocol not in (6, 17) or len(segment) < 4:
        return None
    source_port, destination_port = struct.unpack_from("!HH", segment, 0)
    if protocol == 6:
        if len(segment) < 14 or segment[13] & 0x12 != 0x02:  # a connection's first packet only
            return None
        return "tcp", f"{source}:{source_port}", f"{destination}:{destination_port}"
    return "udp", f"{source}:{source_port}", f"{destination}:{destination_port}"
