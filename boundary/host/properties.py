"""Properties of the host jobs run on, reported but never judged: each says what it lets a job do.

A property is one `HostProperty` in `HOST_PROPERTIES`: the probe process inside the host
(boundary/host/inside.py) reads it into every full sample, and the host report
(boundary/host/health.py) gives its value at baseline and what that means. It never fails a run by
itself — it is how this machine is, not what a job did — but a value that changes during the jobs is said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SYSCTL_ROOT = Path("/proc/sys")


@dataclass(frozen=True)
class HostProperty:
    name: str  # as the report names it, e.g. the sysctl's dotted name
    key: str  # its value's name in a sample
    read: Callable[[], str | None]  # inside the host; None: it has no such thing
    meaning: Callable[[str | None], str]  # what this value lets a job do


def read_sysctl(name: str, root: Path = SYSCTL_ROOT) -> str | None:
    """`dev.tty.x` read from ROOT/dev/tty/x; None when this kernel has no such knob."""
    try:
        return (root / name.replace(".", "/")).read_text().strip()
    except OSError:
        return None


LEGACY_TIOCSTI = "dev.tty.legacy_tiocsti"


def tiocsti_meaning(value: str | None) -> str:
    """What `dev.tty.legacy_tiocsti` at this value (None: absent) lets a process that shares a job's terminal do."""
    if value is None:
        return (
            "no such sysctl: the kernel is older than 6.2, where TIOCSTI is always allowed — any process that "
            "shares a job's terminal can type into it, unless the sandbox starts a new session"
        )
    if value == "0":
        return "TIOCSTI is refused without CAP_SYS_ADMIN: a process sharing a job's terminal cannot type into it"
    return (
        "TIOCSTI is allowed: any process that shares a job's terminal can push keystrokes into it, unless the "
        "sandbox starts a new session (setsid, bwrap --new-session); `sysctl -w dev.tty.legacy_tiocsti=0` refuses it"
    )


HOST_PROPERTIES: tuple[HostProperty, ...] = (
    HostProperty(LEGACY_TIOCSTI, "legacy_tiocsti", lambda: read_sysctl(LEGACY_TIOCSTI), tiocsti_meaning),
)
