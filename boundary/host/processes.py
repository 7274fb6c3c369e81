"""What runs and what listens in the host: a job must leave neither a process nor a port behind."""

from __future__ import annotations

import os
import socket

import psutil

from boundary.host.base import RESOLVED_PROCESS


def _comm(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return ""


def processes() -> list[str]:
    """`pid comm` of every process in the host but this probe."""
    pids = [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) != os.getpid()]
    return sorted(f"{pid} {_comm(pid)}" for pid in pids if _comm(pid))


def resolver_running() -> bool:
    return any(_comm(pid) == RESOLVED_PROCESS for pid in os.listdir("/proc") if pid.isdigit())


def listeners() -> list[str]:
    """Every TCP socket listening and every UDP socket bound in the host's network namespace."""
    found = set()
    for conn in psutil.net_connections(kind="inet"):
        if conn.type == socket.SOCK_STREAM and conn.status != psutil.CONN_LISTEN:
            continue
        if conn.type == socket.SOCK_DGRAM and conn.raddr:
            continue  # a connected UDP socket is a client, not a service
        proto = "tcp" if conn.type == socket.SOCK_STREAM else "udp"
        ip, port = conn.laddr  # type: ignore[misc]  # psutil types laddr as addr | (); bound sockets have one
        found.add(f"{proto} {ip}:{port} ({_comm(str(conn.pid)) if conn.pid else '?'})")
    return sorted(found)


def process_diff(before: list[str], after: list[str]) -> str:
    """Processes left in the host that were not there at baseline (compared by name: a restart changes pids)."""
    remaining = [entry.split(" ", 1)[1] for entry in before]
    left = []
    for entry in after:
        name = entry.split(" ", 1)[1]
        if name in remaining:
            remaining.remove(name)
        else:
            left.append(entry)
    return f"left running: {', '.join(left)}" if left else ""


def listener_diff(before: list[str], after: list[str]) -> str:
    """Ports opened since the baseline, and ports whose service no longer listens."""
    opened, closed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    return "; ".join(
        ([f"new listener: {', '.join(opened)}"] if opened else []) + ([f"gone: {', '.join(closed)}"] if closed else [])
    )
