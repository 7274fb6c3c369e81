"""One loopback-only network namespace, PID namespace and mount namespace that several jobs share.

Jobs on one host share a network and a PID namespace, so a runner that forgets a boundary
between them must be caught: a job of a pod sees the others' processes (their `environ`,
their `cmdline`). The scripted model is bridged in once; the harness's records are hidden
under an empty read-only tmpfs (no job may write there: it is no place two jobs share). Each
job enters with nsenter, traced by strace, and is reaped by a child subreaper: when it ends,
what it left running dies, and nothing of another job does.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import psutil

from boundary import proc
from boundary.jobs.netns import STRACE, NetnsError, loopback
from boundary.jobs.packets import PacketWatch, route_everything_to_loopback
from boundary.results.network import BRIDGE_PORT

_INIT = """set -e
{loopback}{routes}\
socat TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{socket} </dev/null >/dev/null 2>&1 &
mount -t tmpfs -o ro,size=64k,mode=0700 boundary-hidden {records}
for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.02; done
echo ready
trap 'exit 0' TERM
while :; do sleep 0.5 & wait $! || true; done
"""
# Runs the job as a child subreaper: orphans of the job come back to it, and die with it.
_REAPER = """
import ctypes, os, subprocess, sys
import psutil
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
os.chdir(sys.argv[1])
code = subprocess.call(sys.argv[2:])
for _ in range(50):  # what the job left: killed, and what they leave comes back here in turn
    left = psutil.Process().children(recursive=True)
    if not left:
        break
    for child in left:
        child.kill()
    psutil.wait_procs(left, timeout=1)
sys.exit(code)
"""


class Pod:
    """`packets`: the pod's network is watched by a packet capture (packets.py) instead of tracing each job."""

    def __init__(self, model_socket: Path, records: Path, enter: tuple[str, ...] = (), packets: bool = False) -> None:
        self.model_socket, self.records, self.enter = model_socket, records, enter
        self.watch_packets = packets
        self.packets: PacketWatch | None = None  # running while the pod is, when `packets`
        self._process: subprocess.Popen[str] | None = None
        self.pid: int | None = None  # its init, as this process sees it

    def start(self) -> Pod:
        namespaces = ["--net", "--pid", "--fork", "--mount", "--mount-proc", "--kill-child"]
        routes = route_everything_to_loopback() if self.watch_packets else ""
        socket = shlex.quote(str(self.model_socket))
        init = _INIT.format(port=BRIDGE_PORT, socket=socket, records=self.records, routes=routes, loopback=loopback())
        argv = [*proc.DIES_WITH_US, *self.enter, "unshare", *namespaces, "--", "bash", "-c", init]
        self._process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, start_new_session=True
        )
        assert self._process.stdout is not None
        if self._process.stdout.readline().strip() != "ready":
            self.stop()
            raise NetnsError(f"expected the shared job namespace to come up; `{shlex.join(argv[:4])} …` did not")
        self.pid = _init_pid(self._process.pid)
        if self.watch_packets:  # before any job runs; from this process, outside the pod's PID namespace
            try:
                self.packets = PacketWatch.start(Path(f"/proc/{self.pid}/ns/net"))
            except OSError as error:
                self.stop()
                raise NetnsError(f"expected a packet capture in the job namespace; it failed: {error}") from None
        return self

    def wrap(self, argv: list[str], cwd: Path, trace_fd: int | None) -> list[str]:
        """argv run inside the pod, reaped when it ends; its whole process tree traced into `trace_fd` if given."""
        if self.pid is None:
            raise NetnsError("the shared job namespace is not running")
        traced = [*STRACE, "-o", f"/dev/fd/{trace_fd}", "--"] if trace_fd is not None else []
        enter = ["nsenter", "-t", str(self.pid), "--net", "--pid", "--mount"]
        reaper = [sys.executable, "-c", _REAPER, str(cwd)]
        return [*enter, *traced, *reaper, *argv]

    def stop(self) -> None:
        """End the namespace: its launcher's whole group (nsenter, unshare), so its init and every job process die."""
        if self.packets is not None:
            self.packets.stop()  # what it saw stays readable
        if self._process is not None:
            members = _tree(self._process.pid)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)  # unshare ignores SIGTERM while it waits
            self._process.wait()
            if self._process.stdout is not None:
                self._process.stdout.close()
            _, alive = psutil.wait_procs(members, timeout=5.0)
            if alive:
                raise NetnsError(f"expected the shared job namespace to end; still there: {[p.pid for p in alive]}")
        self._process, self.pid = None, None

    def __enter__(self) -> Pod:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _init_pid(launcher: int, timeout_s: float = 10.0) -> int:
    """The pod's PID 1, seen from here: the launcher's descendant whose innermost PID is 1."""

    def init() -> int | None:
        children = psutil.Process(launcher).children(recursive=True)
        return next((child.pid for child in children if _innermost_pid(child.pid) == 1), None)

    found = proc.wait_until(init, timeout_s, interval_s=0.02)
    if found is None:
        raise NetnsError(f"expected the shared job namespace's init under PID {launcher}; none appeared")
    return found


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _innermost_pid(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    line = next((line for line in status.splitlines() if line.startswith("NSpid:")), "NSpid: 0")
    return int(line.split()[-1])
