"""Which process can name which in /proc: PID namespaces, seen from the host.

A job whose agent runs in a PID namespace of its own (a container per job, a sandbox that unshares PIDs) sees
only the processes of that namespace and of those below it, each under the number that namespace gives it. So a
probe of another job's `/proc/<pid>` must use the number the prober's own namespace gives, or say that there is
none — a host number read inside a container names nothing, or one of the container's own processes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable
from pathlib import Path

import psutil

# The process of a gVisor sandbox that runs its Sentry: a user-space kernel with a process table of its own.
GVISOR_SENTRY = "runsc-sandbox"

NS_GET_PARENT = 0xB702  # ioctl on a namespace file: a file of its parent namespace (linux/nsfs.h)


def namespace_of(pid: int) -> int | None:
    """The inode of the process's PID namespace; None when it is gone."""
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


def ancestry(pid: int) -> list[int]:
    """The process's PID namespace and each one above it, innermost first, as far as this process may look."""
    try:
        fd = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY)
    except OSError:
        return []
    chain = [os.fstat(fd).st_ino]
    try:
        while True:
            try:
                parent = fcntl.ioctl(fd, NS_GET_PARENT)
            except OSError:  # the top (EPERM), or a kernel without the ioctl
                return chain
            os.close(fd)
            fd = parent
            chain.append(os.fstat(fd).st_ino)
    finally:
        os.close(fd)


def numbers(pid: int) -> list[int]:
    """The process's number in each PID namespace it is in, outermost (this process's) first: `NSpid`."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return []
    line = next((line for line in status.splitlines() if line.startswith("NSpid:")), "")
    return [int(field) for field in line.split()[1:]]


def seen_from(namespace: int, pid: int) -> int | None:
    """The number `namespace` gives the process; None when the process is not in it nor below it."""
    chain, known = ancestry(pid), numbers(pid)
    if namespace not in chain or len(chain) != len(known):
        return None
    return known[len(known) - 1 - chain.index(namespace)]


def running(executables: Iterable[Path], among: Iterable[int]) -> list[int]:
    """Those of `among` whose program is one of `executables` (the same file: device and inode)."""
    wanted = set()
    for executable in executables:
        with contextlib.suppress(OSError):
            found = executable.stat()
            wanted.add((found.st_dev, found.st_ino))
    matched = []
    for pid in among:
        with contextlib.suppress(OSError):
            found = os.stat(f"/proc/{pid}/exe")
            if (found.st_dev, found.st_ino) in wanted:
                matched.append(pid)
    return matched


def user_space_kernels(pids: Iterable[int]) -> set[int]:
    """The gVisor Sentries among these processes and their descendants: each holds tasks the host's /proc does
    not show as themselves, and shows its tasks only its own processes (no host process is ever in it)."""
    found: set[int] = set()
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(pid)
            for member in (root, *root.children(recursive=True)):
                with contextlib.suppress(psutil.Error):
                    if member.cmdline()[:1] == [GVISOR_SENTRY]:
                        found.add(member.pid)
    return found
