"""Why a namespace was refused, and the one fix: the kernel's user-namespace knobs, AppArmor, a container's seccomp.

The doctor (boundary/doctor/checks.py) asks this when bwrap or unshare could not create their namespaces.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from boundary.host.properties import read_sysctl as read_sysctl_at

SYSCTL_ROOT = Path("/proc/sys")  # tests point this at fake files

APPARMOR_FIX = (
    "install the bwrap-userns-restrict AppArmor profile (apt-get install apparmor-profiles; "
    "ln -s /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && systemctl reload apparmor), "
    "or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
)
CONTAINER_FIX = (
    "run the container with --security-opt seccomp=unconfined (and apparmor=unconfined; "
    "as root also --cap-add SYS_ADMIN)"
)


def read_sysctl(name: str, root: Path | None = None) -> str | None:
    """`kernel.x` read from ROOT/kernel/x; None when this kernel has no such knob."""
    return read_sysctl_at(name, root or SYSCTL_ROOT)


# Diagnosis rules, most definite first: a userns knob at 0 explains any refusal,
# whatever the message; AppArmor only explains the refusals it causes.
Rule = Callable[[str], tuple[str, str] | None]


def _userns_clone_off(stderr: str) -> tuple[str, str] | None:
    if read_sysctl("kernel.unprivileged_userns_clone") != "0":
        return None
    cause = "unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0)"
    return cause, "sysctl -w kernel.unprivileged_userns_clone=1"


def _max_userns_zero(stderr: str) -> tuple[str, str] | None:
    if read_sysctl("user.max_user_namespaces") != "0":
        return None
    return "no user namespaces allowed (user.max_user_namespaces=0)", "sysctl -w user.max_user_namespaces=15000"


def _apparmor(stderr: str) -> tuple[str, str] | None:
    refused = "Failed RTM_NEWADDR" in stderr or "Operation not permitted" in stderr
    if not refused or read_sysctl("kernel.apparmor_restrict_unprivileged_userns") != "1":
        return None
    cause = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)"
    return cause, APPARMOR_FIX


def _uid_map(stderr: str) -> tuple[str, str] | None:
    if "uid map" not in stderr and "uid_map" not in stderr:
        return None
    return "the user namespace's uid map was refused (AppArmor or a userns sysctl)", APPARMOR_FIX


def _container(stderr: str) -> tuple[str, str] | None:
    if "Operation not permitted" not in stderr:
        return None
    return "namespaces refused with no sysctl to blame: likely a container's seccomp profile", CONTAINER_FIX


RULES: tuple[Rule, ...] = (_userns_clone_off, _max_userns_zero, _apparmor, _uid_map, _container)


def diagnose(argv: list[str], stderr: str) -> tuple[str, str]:
    """(cause, fix) for a namespace command that failed with this stderr."""
    for rule in RULES:
        found = rule(stderr)
        if found:
            return found
    return "unknown failure", f"run the command shown by hand: {shlex.join(argv)}"
