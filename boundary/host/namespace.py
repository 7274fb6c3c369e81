"""A disposable "namespace host": its own /run, D-Bus system bus, dnsmasq and a real systemd-resolved.

Incident 3 (DESIGN.md) broke a host by chmod'ing root-owned sockets under /run; the damage showed only
when systemd-resolved next restarted. This host lets a check do exactly that — inside mount, network
and PID namespaces — and watch DNS die, without touching the real host: /run is a private tmpfs, /etc an
overlay whose writes land in the work directory (a runner's hook may add users there), every other file it
needs a bind mount of a copy in the work directory, and all mounts use `mount -n` (without -n, libmount
would create /run/mount on the host's /run before the tmpfs covers it).

What it is made of (its files and PID 1's script) is in boundary/host/namespace_files.py; the
systemd-resolved it runs, extracted from its .deb, in boundary/host/resolved.py.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

from boundary import proc
from boundary.host.base import CANARY_NAME, RESOLVED_PROCESS, Host, HostError, NsenterHost, Stamp
from boundary.host.namespace_files import user_ids, write_files
from boundary.host.own_root import written
from boundary.host.resolved import RESOLVED_BINARY, resolved_root

BOOT_TIMEOUT_S = 15.0
STOP_GRACE_S = 3.0
RESTART_TIMEOUT_S = 10.0  # resolved is ready in ~50 ms; this bounds a wedged host, not a slow one
POLL_S = 0.01
NOTIFY_SOCKET = "/run/nshost/notify"  # resolved's sd_notify socket, as seen inside
# $1 resolved, $2 its log, $3 the notify socket; `$!` stays resolved's PID through setsid's exec.
START_RESOLVED = 'NOTIFY_SOCKET="$3" SYSTEMD_LOG_TARGET=console setsid "$1" >> "$2" 2>&1 < /dev/null & echo $!'
UNSHARE = [
    *proc.DIES_WITH_US,
    *("unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc", "--propagation", "private", "--kill-child"),
]
APT_FIX = "apt-get install util-linux iproute2 dbus dnsmasq-base"

# command -> Debian package that provides it
COMMANDS: dict[str, str] = {
    "unshare": "util-linux",
    "nsenter": "util-linux",
    "setpriv": "util-linux",
    "ip": "iproute2",
    "dbus-daemon": "dbus",
    "dnsmasq": "dnsmasq-base",
}


def new_host(session_dir: Path, progress: Callable[[str], None]) -> Host:
    """This kind's factory in the `--host` registry (boundary/host/__init__.py)."""
    return NamespaceHost(session_dir / "host")


class NamespaceHost(NsenterHost):
    """One disposable host; `with NamespaceHost(tmp).start() as host: host.run([...])`. Its / (`root()`) is
    this machine's: only /run and /etc are its own."""

    name: str = "namespace"  # how reports and `--host` name this kind of host
    disposable: bool = True  # destructive controls may run here
    namespaces = ("-m", "-n", "-p")

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir).resolve()
        self.boot_s = 0.0
        self.pid = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._resolved_root: Path | None = None
        self.restart_timeout_s = RESTART_TIMEOUT_S

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> NamespaceHost:
        missing = [name for name in COMMANDS if shutil.which(name) is None]
        if missing:
            packages = sorted({COMMANDS[m] for m in missing})
            raise HostError(
                f"expected {', '.join(COMMANDS)} on PATH; missing: {', '.join(missing)} "
                f"(packages {', '.join(packages)}). Fix: {APT_FIX}"
            )
        self._resolved_root = resolved_root()
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = write_files(self.workdir, self._resolved_root)
        began = time.monotonic()
        with (self.workdir / "init.log").open("ab") as log:
            # PID 1 of the host: a daemon, stopped by stop(); proc.run is for commands that finish.
            self._proc = subprocess.Popen(
                [*UNSHARE, "bash", str(self.workdir / "init.sh")],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # our terminal's signals must not reach the host
            )
        try:
            self.pid = self._find_init()
            self._wait_ready(BOOT_TIMEOUT_S - (time.monotonic() - began))
        except BaseException:
            self.stop()
            raise
        self.boot_s = time.monotonic() - began
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        # When PID 1 of a PID namespace exits the kernel SIGKILLs everything else inside it.
        if self.pid:
            _signal(self.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            if self.pid:
                _signal(self.pid, signal.SIGKILL)
            _signal(proc.pid, signal.SIGKILL)
            proc.wait(timeout=STOP_GRACE_S)

    def __enter__(self) -> NamespaceHost:
        return self if self._proc is not None else self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- inside ---------------------------------------------------------------------------------

    @property
    def _fix(self) -> str:
        return f"the host may be wedged: read init.log and resolved.log in {self.workdir}"

    def enter_files(self) -> list[str]:
        return ["nsenter", "-t", str(self._started_pid()), "-m", "-p", "--"]

    def written(self) -> dict[str, Stamp]:
        """Every path the host's own root holds that this machine's does not: what ran there wrote it."""
        return written(self._started_pid(), self.workdir)

    def resolved_running(self) -> bool:
        return self.run(["pgrep", "-x", RESOLVED_PROCESS]).returncode == 0

    def restart_resolved(self) -> None:
        """Do what systemd does on a restart: stop resolved, start it, wait as for its Type=notify unit.

        Returns once every old resolved has exited and the new one (followed by PID, not by name: it is
        `bash`, then `setsid`, until its exec) has sent READY=1, which it does only after it has reached
        the bus and bound its stub, or has exited: incident 3's chmod'ed bus kills it before READY=1,
        a finding for the checks. Raises HostError only when the host is wedged.
        """
        self._stop_resolved()
        with self._notify_socket() as notify:
            self._await_ready(notify, self._start_resolved())

    # -- systemd-resolved's restart -------------------------------------------------------------

    def _stop_resolved(self) -> None:
        """SIGTERM (then SIGKILL) every resolved and wait until each has exited: a resolved started while
        one still holds 127.0.0.53:53 logs "Another process is already listening" and runs without a stub."""
        pids = [int(pid) for pid in self.run(["pgrep", "-x", RESOLVED_PROCESS]).stdout.split()]
        for sig in ("TERM", "KILL"):
            alive = [pid for pid in pids if not self._gone(pid)]
            if not alive:
                return
            self.run(["kill", f"-{sig}", *map(str, alive)])
            if proc.wait_until(functools.partial(self._all_gone, alive), STOP_GRACE_S, POLL_S):
                return
        raise HostError(
            f"namespace host in {self.workdir}: expected systemd-resolved (PIDs {pids} inside) to exit within "
            f"{STOP_GRACE_S:g} s of SIGKILL; PIDs {[p for p in pids if not self._gone(p)]} remain. Fix: {self._fix}"
        )

    def _start_resolved(self) -> int:
        """Start resolved inside; return its PID there (a background job keeps it through both execs)."""
        root = self._resolved_root
        assert root is not None, "started hosts know their resolved"
        # The backgrounded resolved is orphaned inside the PID namespace, so our PID 1 reaps it.
        argv = [str(root / RESOLVED_BINARY), str(self.workdir / "resolved.log"), NOTIFY_SOCKET]
        said = self.run(["bash", "-c", START_RESOLVED, "restart", *argv]).stdout.strip()
        if not said.isdigit():
            raise HostError(f"expected the PID of the restarted systemd-resolved; saw {said!r}. Fix: {self._fix}")
        return int(said)

    @contextlib.contextmanager
    def _notify_socket(self) -> Iterator[socket.socket]:
        """The sd_notify socket resolved says READY=1 on, bound in the host's private /run from outside.

        Removed afterwards: a socket left under /run would be a finding of the run_sockets check.
        """
        path = Path(f"/proc/{self.pid}/root{NOTIFY_SOCKET}")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.bind(str(path))
            try:
                os.chown(path, *user_ids((self.workdir / "passwd").read_text(), "systemd-resolve"))  # dropped root
                yield sock
            finally:
                path.unlink()

    def _await_ready(self, notify: socket.socket, pid: int) -> None:
        """Until the new resolved says READY=1 or exits; the select in `_says_ready` is the poll interval."""

        def settled() -> str | None:
            if self._gone(pid):
                return "exited"
            return "ready" if _says_ready(notify, POLL_S) else None

        if proc.wait_until(settled, self.restart_timeout_s, interval_s=0) is None:
            raise HostError(
                f"namespace host in {self.workdir}: expected the restarted systemd-resolved (PID {pid} inside) "
                f"to send READY=1 or exit within {self.restart_timeout_s:g} s; it still runs, not ready.\n"
                f"{_tail(self.workdir / 'resolved.log')}\nFix: {self._fix}"
            )

    def _gone(self, pid: int) -> bool:
        """Whether a PID inside has exited and been reaped (read through the /proc mounted inside)."""
        return not Path(f"/proc/{self.pid}/root/proc/{pid}").exists()

    def _all_gone(self, pids: list[int]) -> bool | None:
        """True once every PID inside has exited; None while one runs (what proc.wait_until waits on)."""
        return True if all(self._gone(pid) for pid in pids) else None

    # -- boot -----------------------------------------------------------------------------------

    def _find_init(self) -> int:
        """The host-view PID of the namespace's PID 1: the one child `unshare --fork` makes."""
        unshare = self._proc
        assert unshare is not None
        children = Path(f"/proc/{unshare.pid}/task/{unshare.pid}/children")

        def child() -> int | None:
            with_pid = children.read_text().split() if children.exists() else []
            if with_pid:
                return int(with_pid[0])
            return 0 if unshare.poll() is not None else None  # 0: unshare is gone, no child will come

        pid = proc.wait_until(child, BOOT_TIMEOUT_S, interval_s=0.005)
        if not pid:
            raise self._boot_error("the namespace's PID 1 to appear")
        return pid

    def _wait_ready(self, timeout_s: float) -> None:
        """Until the init script writes `ready` (ok, or fail: the canary did not resolve) or dies."""
        unshare, ready = self._proc, self.workdir / "ready"
        assert unshare is not None

        def said() -> str | None:
            if ready.exists():
                return ready.read_text().strip()
            return "exited" if unshare.poll() is not None else None

        outcome = proc.wait_until(said, timeout_s, interval_s=POLL_S)
        if outcome == "ok":
            return
        if outcome is None:
            raise self._boot_error(f"the host to boot within {BOOT_TIMEOUT_S:.0f} s")
        if outcome == "exited":
            raise self._boot_error("the init script to keep running")
        raise self._boot_error(f"`getent hosts {CANARY_NAME}` to answer inside")

    def _boot_error(self, expected: str) -> HostError:
        code = None if self._proc is None else self._proc.poll()
        tails = "\n".join(_tail(self.workdir / name) for name in ("init.log", "resolved.log", "dnsmasq.log"))
        return HostError(
            f"namespace host in {self.workdir}: expected {expected}; saw (init exit code {code}):\n{tails}\n"
            "Fix: read the log tails above; a resolved version mismatch or a missing system user "
            "(messagebus, systemd-resolve) are the usual causes; `boundary doctor` checks the commands."
        )


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except FileNotFoundError:
        return f"--- {path.name}: (absent)"
    return f"--- {path.name}:\n" + "\n".join(text)


def _says_ready(notify: socket.socket, timeout_s: float) -> bool:
    """Whether a datagram arrives on the notify socket within the timeout and has a READY=1 line."""
    if not select.select([notify], [], [], timeout_s)[0]:
        return False
    return b"READY=1" in notify.recv(4096).split(b"\n")


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone: that is what we wanted
        os.kill(pid, sig)
