"""Hosts under test (`--host`): where jobs run and host health is checked (incident 3)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from boundary.host.base import Host

HOST_MODES = ("namespace", "container", "live")


def make_host(mode: str, session_dir: Path, progress: Callable[[str], None] = print) -> Host:
    """An unstarted host of this kind; its own files go under session_dir/host.

    Imported here, not at the top: the probe process run inside a host imports this package too,
    and needs none of the host kinds.
    """
    if mode == "namespace":
        from boundary.host.namespace import NamespaceHost

        return NamespaceHost(session_dir / "host")
    if mode == "container":
        from boundary.host.container import ContainerHost

        return ContainerHost(session_dir / "host", session_dir, progress)
    if mode == "live":
        from boundary.host.live import LiveHost

        return LiveHost()
    raise ValueError(f"--host: expected one of {', '.join(HOST_MODES)}; got {mode!r}")
