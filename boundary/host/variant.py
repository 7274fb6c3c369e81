"""How this run's disposable host differs from this machine, as a user's host may: `--host-etc NAME=FILE` puts a
file over its /etc/NAME (a distribution's stock hosts file, say), `--host-ipv6 off` turns IPv6 off in it and in
every job's network namespace. A verdict must not depend on such files: these let a run show it does not.

Both travel as environment variables, so the suite's workers and every job wrapper read the same choice.
"""

from __future__ import annotations

import os
from pathlib import Path

ETC_ENV = "BOUNDARY_HOST_ETC"  # `--host-etc`, as NAME=FILE,NAME=FILE
IPV6_ENV = "BOUNDARY_HOST_IPV6"  # `--host-ipv6`: "on" (default) or "off"
# Run inside a network namespace of the host or of a job (never this machine's: each is per namespace).
IPV6_OFF = (
    "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.lo.disable_ipv6=1"
)

# What the namespace host writes over /etc itself, and why: `--host-etc` may not replace these.
OWN_ETC = {
    "resolv.conf": "its systemd-resolved's stub, which the dns check asks",
    "passwd": "the host's users plus the ones its checks run as",
    "group": "the host's groups plus its users' own",
    "systemd/resolved.conf": "its systemd-resolved's settings",
}


def etc_files() -> dict[str, Path]:
    """The files `--host-etc NAME=FILE` puts over the host's /etc/NAME. A ValueError names a malformed one."""
    chosen: dict[str, Path] = {}
    for item in filter(None, os.environ.get(ETC_ENV, "").split(",")):
        name, _, file = item.partition("=")
        if not name or not file or name.startswith("/") or ".." in Path(name).parts:
            raise ValueError(
                f"--host-etc: expected NAME=FILE, NAME relative to /etc (e.g. hosts=./hosts); got {item!r}"
            )
        if name in OWN_ETC:
            raise ValueError(f"--host-etc {item}: the namespace host writes /etc/{name} itself ({OWN_ETC[name]})")
        if not Path(file).is_file():
            raise ValueError(f"--host-etc {item}: {file} is not a readable file")
        chosen[name] = Path(file).resolve()
    return chosen


def ipv6_off() -> bool:
    return os.environ.get(IPV6_ENV, "on") == "off"
