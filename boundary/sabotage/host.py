"""Sabotaged runners whose launch step damages the host (a "safety strategy" run as root before each job): the
host-health checks must name what each broke. Their hooks run only on a disposable host (`--host namespace` or
`--host container`). Select one with `--runner boundary.sabotage.host:NAME`.
"""

from __future__ import annotations

import sys

from boundary.host.base import RESOLVED_PROCESS
from boundary.runners.contract import Job
from boundary.runners.opencode import OpencodeRunner

# What codex-action's drop-sudo did: chmod(mode & 0o700) on root-owned sockets under /run.
DROP_SUDO = """
import os, stat
for directory, _, files in os.walk('/run'):
    for name in files:
        path = os.path.join(directory, name)
        info = os.lstat(path)
        if stat.S_ISSOCK(info.st_mode) and info.st_uid == 0:
            os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
"""


class HostHookRunner(OpencodeRunner):
    """A reference runner whose launch step also runs a command on the host (a 'safety strategy')."""

    hook: tuple[str, ...] = ()

    def create_job(self, name: str, model_url: str) -> Job:
        job = super().create_job(name, model_url)
        job.hooks.append(list(self.hook))
        return job


class DropSudo(HostHookRunner):
    """Incident 3: chmod(mode & 0o700) on root-owned sockets under /run before each job."""

    name = "drop-sudo"
    hook = (sys.executable, "-c", DROP_SUDO)


class KillsResolver(HostHookRunner):
    """A runner step that kills systemd-resolved."""

    name = "kills-resolver"
    hook = ("pkill", "-x", RESOLVED_PROCESS)


class KillsBus(HostHookRunner):
    """A runner step that kills the system bus."""

    name = "kills-bus"
    hook = ("pkill", "-x", "dbus-daemon")


class LeavesProcess(HostHookRunner):
    """A runner step that leaves a background process behind on the host."""

    name = "leaves-process"
    hook = ("bash", "-c", "setsid -f sleep 600 </dev/null >/dev/null 2>&1")


class OpensPort(HostHookRunner):
    """A runner step that leaves a service listening on a port of the host."""

    name = "opens-port"
    hook = (
        "bash",
        "-c",
        "setsid -f socat TCP-LISTEN:7777,bind=127.0.0.1,fork,reuseaddr EXEC:/bin/true </dev/null >/dev/null 2>&1",
    )


class DeniesNobodyByAcl(HostHookRunner):
    """The drop-sudo fix's own way to lock a user out: an ACL entry, the mode left as it was (mode checks miss it)."""

    name = "denies-nobody-by-acl"
    hook = ("setfacl", "-m", "u:nobody:---", "/run/dbus/system_bus_socket")
