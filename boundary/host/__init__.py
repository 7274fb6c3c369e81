"""Hosts under test (`--host`): where jobs run and host health is checked (incident 3).

Each kind of host is one module with a factory, and one `HostKind` record below: its capabilities, not
its name, decide what is asked of it (boundary/host/health.py's `checks_for` asks whether it runs systemd).
May import the toolchain and the core modules; never runners, jobs, scenarios, report or suite.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from boundary.host.base import Host

HostFactory = Callable[[Path, Callable[[str], None]], Host]  # (session_dir, progress) -> an unstarted host


@dataclass(frozen=True)
class HostKind:
    """One `--host` choice and what a host of its kind can do."""

    name: str  # as `--host` and reports spell it; its host's `name` too
    factory: str  # "module:function", a HostFactory; imported only when a host is made
    runs_systemd: bool  # systemd is PID 1 there, so its units can be checked (the `services` check)
    disposable: bool  # destructive controls (a runner's host-changing hooks) may run there; its host's too

    def make(self, session_dir: Path, progress: Callable[[str], None]) -> Host:
        module, _, function = self.factory.partition(":")
        return cast(HostFactory, getattr(importlib.import_module(module), function))(session_dir, progress)


HOST_KINDS: dict[str, HostKind] = {
    kind.name: kind
    for kind in (
        HostKind("namespace", "boundary.host.namespace:new_host", runs_systemd=False, disposable=True),
        HostKind("container", "boundary.host.container:new_host", runs_systemd=True, disposable=True),
        # A real machine is expected to run systemd: where it does not, `services` is NOT CHECKED, never held.
        HostKind("live", "boundary.host.live:new_host", runs_systemd=True, disposable=False),
    )
}
HOST_MODES = tuple(HOST_KINDS)


def host_kind(mode: str) -> HostKind:
    """The registered kind of this name; a ValueError that lists the choices otherwise."""
    if mode not in HOST_KINDS:
        raise ValueError(f"--host: expected one of {', '.join(HOST_MODES)}; got {mode!r}")
    return HOST_KINDS[mode]


def make_host(mode: str, session_dir: Path, progress: Callable[[str], None] = print) -> Host:
    """An unstarted host of this kind; its own files go under session_dir/host.

    The factory is imported here, not at the top: the probe process run inside a host imports this
    package too, and needs none of the host kinds.
    """
    return host_kind(mode).make(session_dir, progress)
