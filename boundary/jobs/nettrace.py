"""Prove a job touched no network: read the strace of its whole process tree.

Every AF_INET/AF_INET6 destination a job's processes connected or sent to,
successful or not, must be the scripted model's bridge on loopback. Every job
talks to that bridge, so a trace that does not show it (or is missing, or
empty) proves nothing and is never clean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from boundary.jobs.netns import BRIDGE_PORT

_INET = re.compile(r'sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sa_family=AF_INET6, sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
_UNIX = re.compile(r'sa_family=AF_UNIX, sun_path=@?"([^"]+)"')
_EXECVE = re.compile(r'^(\d+)\s+execve\("([^"]+)"', re.MULTILINE)
_LINE_PID = re.compile(r"^(\d+)\s")
MODEL = f"127.0.0.1:{BRIDGE_PORT}"


@dataclass(frozen=True)
class NetworkUse:
    inet: frozenset[str]  # host:port destinations
    unix: frozenset[str]  # socket paths (local IPC, listed for the record)
    problem: str | None = None  # why the trace could not be read; None: it was read
    # (destination, the program that reached for it), for the record
    by: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    observed_by: str = field(default="trace", kw_only=True)  # "trace" (strace -f) or "packets" (packets.py)

    @property
    def foreign(self) -> list[str]:
        return sorted(self.inet - {MODEL})

    @property
    def unproven(self) -> str | None:
        """Why this trace proves nothing about the job's network use; None when it does."""
        if self.problem:
            return self.problem
        if MODEL not in self.inet:
            if self.observed_by == "packets":
                return "the packet capture shows no connection to the scripted model, so it proves nothing"
            return "the trace shows no connection to the scripted model, so it proves nothing (strace saw nothing?)"
        return None

    @property
    def clean(self) -> bool:
        return not self.foreign and self.unproven is None

    def explain(self) -> str:
        if self.foreign:  # a foreign peer is a finding even in a trace that is otherwise broken
            return f"reached beyond the scripted model: {', '.join(self._named(self.foreign))}"
        reason = self.unproven
        if reason:
            return f"INCONCLUSIVE: {reason}"
        if self.observed_by == "packets":
            return "the scripted model only (seen by a packet capture in the job's namespace)"
        return f"the scripted model only; unix sockets: {', '.join(sorted(self.unix)) or 'none'}"

    def _named(self, destinations: list[str]) -> list[str]:
        programs = dict(self.by)
        return [f"{d} (by {programs[d]})" if d in programs else d for d in destinations]


def read_trace(path: Path) -> NetworkUse:
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return _unreadable(f"the trace {path} is unreadable ({error.strerror}), so it proves nothing (did strace run?)")
    if not text.strip():
        return _unreadable(f"the trace {path} is empty, so it proves nothing (did strace run?)")
    inet = {f"{host}:{port}" for port, host in _INET.findall(text)}
    inet |= {f"[{host}]:{port}" for port, host in _INET6.findall(text)}
    return NetworkUse(frozenset(inet), frozenset(_UNIX.findall(text)), by=_programs(text))


def _programs(text: str) -> tuple[tuple[str, str], ...]:
    """Each inet destination, and the program its process was running (its latest execve in the trace)."""
    running: dict[str, str] = {}
    seen: dict[str, str] = {}
    for line in text.splitlines():
        pid = _LINE_PID.match(line)
        if pid is None:
            continue
        executed = _EXECVE.match(line)
        if executed:
            running[pid.group(1)] = executed.group(2)
            continue
        for port, host in _INET.findall(line):
            seen.setdefault(
                f"{host}:{port}", f"pid {pid.group(1)}, {running.get(pid.group(1), 'a program started before')}"
            )
    return tuple(seen.items())


def _unreadable(problem: str) -> NetworkUse:
    return NetworkUse(frozenset(), frozenset(), problem)
