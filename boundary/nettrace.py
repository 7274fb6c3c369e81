"""Prove a job touched no network: read the strace of its whole process tree.

Every AF_INET/AF_INET6 destination a job's processes connected or sent to,
successful or not, must be the scripted model's bridge on loopback.
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

    @property
    def foreign(self) -> list[str]:
        return sorted(self.inet - {MODEL})

    @property
    def clean(self) -> bool:
        return not self.foreign

    def explain(self) -> str:
        if self.clean:
            model = "the scripted model only" if MODEL in self.inet else "no inet peer at all"
            return f"{model}; unix sockets: {', '.join(sorted(self.unix)) or 'none'}"
        return f"reached beyond the scripted model: {', '.join(self.foreign)}"


def read_trace(path: Path) -> NetworkUse:
    text = path.read_text(errors="replace")
    inet = {f"{host}:{port}" for port, host in _INET.findall(text)}
    inet |= {f"[{host}]:{port}" for port, host in _INET6.findall(text)}
    return NetworkUse(frozenset(inet), frozenset(_UNIX.findall(text)))
