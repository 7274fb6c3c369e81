"""Hosts under test (`--host`): where jobs run and host health is checked (incident 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from boundary.host.base import Host
from boundary.host.container import ContainerHost
from boundary.host.live import LiveHost
from boundary.host.namespace import NamespaceHost

HOST_MODES = ("namespace", "container", "live")


def make_host(mode: str, session_dir: Path, progress: Callable[[str], None] = print) -> Host:
    """An unstarted host of this kind; its own files go under session_dir/host."""
    if mode == "namespace":
        return NamespaceHost(session_dir / "host")
    if mode == "container":
        return ContainerHost(session_dir / "host", session_dir, progress)
    if mode == "live":
        return LiveHost()
    raise ValueError(f"--host: expected one of {', '.join(HOST_MODES)}; got {mode!r}")
