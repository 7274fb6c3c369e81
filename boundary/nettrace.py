"""Prove a job touched no network: read the strace of its whole process tree.

Every AF_INET/AF_INET6 destination a job's processes connected or sent to,
successful or not, must be the scripted model's bridge on loopback. Every job
talks to that bridge, so a trace that does not show it (or is missing, or
empty) proves nothing and is never clean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from boundary.netns import BRIDGE_PORT

_INET = re.compile(r'sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sa_family=AF_INET6, sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
_UNIX = re.compile(r'sa_family=AF_UNIX, sun_path=@?"([^"]+)"')
MODEL = f"127.0.0.1:{BRIDGE_PORT}"


@dataclass(frozen=True)
class NetworkUse:
    inet: frozenset[str]  # host:port destinations
    unix: frozenset[str]  # socket paths (local IPC, listed for the record)
    problem: str | None = None  # why the trace could not be read; None: it was read

    @property
    def foreign(self) -> list[str]:
        return sorted(self.inet - {MODEL})

    @property
    def unproven(self) -> str | None:
        """Why this trace proves nothing about the job's network use; None when it does."""
        if self.problem:
            return self.problem
        if MODEL not in self.inet:
            return "the trace shows no connection to the scripted model, so it proves nothing (strace saw nothing?)"
        return None

    @property
    def clean(self) -> bool:
        return not self.foreign and self.unproven is None

    def explain(self) -> str:
        if self.foreign:  # a foreign peer is a finding even in a trace that is otherwise broken
            return f"reached beyond the scripted model: {', '.join(self.foreign)}"
        reason = self.unproven
        if reason:
            return f"INCONCLUSIVE: {reason}"
        return f"the scripted model only; unix sockets: {', '.join(sorted(self.unix)) or 'none'}"


def read_trace(path: Path) -> NetworkUse:
    try:
        text = path.read_text(errors="replace")
    except OSError as error:
        return _unreadable(f"the trace {path} is unreadable ({error.strerror}), so it proves nothing (did strace run?)")
    if not text.strip():
        return _unreadable(f"the trace {path} is empty, so it proves nothing (did strace run?)")
    inet = {f"{host}:{port}" for port, host in _INET.findall(text)}
    inet |= {f"[{host}]:{port}" for port, host in _INET6.findall(text)}
    return NetworkUse(frozenset(inet), frozenset(_UNIX.findall(text)))


def _unreadable(problem: str) -> NetworkUse:
    return NetworkUse(frozenset(), frozenset(), problem)
