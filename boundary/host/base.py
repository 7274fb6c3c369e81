"""What every host under test offers the harness, whatever kind it is (live, namespace, container)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from boundary import proc

# The systemd-resolved that every disposable host runs, and the canary its upstream DNS serves.
CANARY_NAME = "canary.boundary.test"
CANARY_ADDRESS = "10.213.0.99"
CANARY_TXT = "boundary-canary-7f3c9a1e5d2b"
RESOLVED_PROCESS = "systemd-resolve"  # systemd-resolved's /proc comm, cut to 15 characters
RESTART_SETTLE_S = 0.5  # resolved comes up in ~50 ms, or dies in ~40 ms when it cannot reach the bus

RESOLVED_CONF = """\
[Resolve]
DNS=127.0.0.2
FallbackDNS=
Domains=~.
DNSSEC=no
DNSOverTLS=no
LLMNR=no
MulticastDNS=no
Cache=no
DNSStubListener=yes
ReadEtcHosts=no
"""

DNSMASQ_CONF = f"""\
listen-address=127.0.0.2
bind-interfaces
port=53
no-resolv
no-hosts
no-poll
local=/boundary.test/
host-record={CANARY_NAME},{CANARY_ADDRESS}
txt-record={CANARY_NAME},"{CANARY_TXT}"
"""

# resolved says "Network is down" with only lo; a veth pair gives it a real link.
VETH_SCRIPT = (
    "ip link set lo up; ip link add nsh0 type veth peer name nsh1; "
    "ip addr add 10.213.0.1/24 dev nsh0; ip addr add 10.213.0.2/24 dev nsh1; "
    "ip link set nsh0 up; ip link set nsh1 up"
)


class HostError(RuntimeError):
    """A host could not be built, booted or reached; the message says expected / seen / fix."""


@dataclass(frozen=True)
class Stamp:
    """One file a host's own root holds (an entry of its upper layer): enough to tell a later write from an earlier
    one (`Host.written`)."""

    kind: str  # "file", "link", "dir", "removed" (a whiteout)
    size: int
    mtime_ns: int
    inode: int


def host_command(
    argv: list[str],
    *,
    timeout: float,
    what: str,
    fix: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """proc.run for a host's commands: one that hangs is a HostError with this fix, never a bare timeout."""
    try:
        return proc.run(argv, timeout=timeout, what=what, cwd=cwd, env=env)
    except proc.ProcTimeout as error:
        raise HostError(f"{error.problem} Fix: {fix}") from error


class Host(Protocol):
    """A host of one kind; each kind's module has a `new_host(session_dir, progress)` factory that makes one
    unstarted, named with its capabilities in the `--host` registry (boundary/host/__init__.py)."""

    name: str  # how reports and `--host` name this kind of host
    boot_s: float
    disposable: bool  # destructive controls (a runner's host-changing hooks) may run here

    def start(self) -> Host: ...

    def stop(self) -> None: ...

    def enter(self) -> list[str]:
        """A command prefix that runs its argv inside the host, with our environment and credentials."""
        ...

    def run(self, argv: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str]: ...

    def root(self) -> Path:
        """The host's `/` as the harness reaches it: its /tmp is where its jobs' /tmp is."""
        ...

    def written(self) -> dict[str, Stamp] | None:
        """Every path written in the host's root since it booted, outside the unit's directory (which it shares
        with the harness); None: this kind of host cannot list them."""
        ...

    def enter_files(self) -> list[str] | None:
        """A command prefix that runs its argv on the host's files and among its processes, on this machine's
        network: where a runner's verbs run, so what they write is listed and thrown away with the host. None:
        they run on this machine (the runner's command is not on this kind of host)."""
        ...

    def restart_resolved(self) -> None:
        """Restart systemd-resolved as systemd would, and return once it has settled (up, or gone).

        Coming back up may fail, and that is a finding for the checks, not an error; this raises
        HostError only when the host is wedged (the old resolved will not exit, or the new one
        neither gets ready nor exits in time).
        """
        ...


class NsenterHost:
    """A host entered through its PID 1: a command joins PID 1's `namespaces` with nsenter, and the host's / is
    PID 1's root. A subclass sets `pid` once started (0 before) and says what to do when a command hangs. Both
    disposable kinds are entered this way."""

    name: str
    pid: int
    namespaces: tuple[str, ...]  # nsenter's flags: the namespaces a command joins

    def enter(self) -> list[str]:
        return ["nsenter", "-t", str(self._started_pid()), *self.namespaces, "--"]

    def run(self, argv: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str]:
        what = f"a command inside the {self.name} host"
        return host_command(self.enter() + argv, timeout=timeout, what=what, fix=self._fix)

    def root(self) -> Path:
        return Path(f"/proc/{self._started_pid()}/root")

    @property
    def _fix(self) -> str:
        raise NotImplementedError

    def _started_pid(self) -> int:
        if not self.pid:
            raise HostError(f"expected a started {self.name} host; call start() first")
        return self.pid
