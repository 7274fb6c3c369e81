"""A disposable "namespace host": its own /run, D-Bus system bus, dnsmasq and a real systemd-resolved.

Incident 3 (DESIGN.md) broke a host by chmod'ing root-owned sockets under /run; the damage showed only
when systemd-resolved next restarted. This host lets a check do exactly that — inside mount, network
and PID namespaces — and watch DNS die, without touching the real host: /run is a private tmpfs, /etc an
overlay whose writes land in the work directory (a runner's hook may add users there), every other file it
needs a bind mount of a copy in the work directory, and all mounts use `mount -n` (without -n, libmount
would create /run/mount on the host's /run before the tmpfs covers it).

systemd-resolved is extracted from its .deb, never installed: its package scripts would take over the
host's /etc/resolv.conf.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

from boundary import tools
from boundary.host.base import (
    CANARY_NAME,
    DNSMASQ_CONF,
    RESOLVED_CONF,
    RESOLVED_PROCESS,
    VETH_SCRIPT,
    HostError,
    host_command,
)

BOOT_TIMEOUT_S = 15.0
STOP_GRACE_S = 3.0
RESTART_TIMEOUT_S = 10.0  # resolved is ready in ~50 ms; this bounds a wedged host, not a slow one
POLL_S = 0.01
NOTIFY_SOCKET = "/run/nshost/notify"  # resolved's sd_notify socket, as seen inside
# $1 resolved, $2 its log, $3 the notify socket; `$!` stays resolved's PID through setsid's exec.
START_RESOLVED = 'NOTIFY_SOCKET="$3" SYSTEMD_LOG_TARGET=console setsid "$1" >> "$2" 2>&1 < /dev/null & echo $!'
RESOLVED_BINARY = "lib/systemd/systemd-resolved"  # bookworm ships it outside /usr
EXTRACTED_MARKER = ".boundary-extracted"
UNSHARE = ["unshare", "--mount", "--net", "--pid", "--fork", "--mount-proc", "--propagation", "private"]
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


# ----------------------------------------------------------------------------------------------
# systemd-resolved, extracted not installed


def _capture(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    what, fix = f"`{argv[0]}` while fetching systemd-resolved", "check that the apt mirror answers: `apt-get update`"
    try:
        return host_command(argv, cwd=cwd, timeout=300, what=what, fix=fix)
    except FileNotFoundError as e:
        raise HostError(f"expected `{argv[0]}` on PATH to fetch systemd-resolved; it is missing ({e})") from e


def _shared_version() -> str:
    # The extracted binary loads libsystemd-shared-NNN.so through its RUNPATH from the host,
    # so the package version must equal the host's libsystemd-shared exactly.
    done = _capture(["dpkg-query", "-W", "-f=${Version}", "libsystemd-shared"])
    if done.returncode != 0 or not done.stdout.strip():
        raise HostError(
            "expected the host package libsystemd-shared (systemd-resolved must match its version); "
            f"dpkg-query said: {done.stderr.strip()!r}. Fix: apt-get install libsystemd-shared"
        )
    return done.stdout.strip()


def resolved_root() -> Path:
    """Return a directory holding systemd-resolved <host's libsystemd-shared version>, extracting it once."""
    version = _shared_version()
    root = tools.cache_root() / "systemd-resolved" / version
    if (root / EXTRACTED_MARKER).exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers extract once
        if not (root / EXTRACTED_MARKER).exists():
            _extract_resolved(version, root)
    return root


def _extract_resolved(version: str, root: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="boundary-resolved-") as tmp:
        done = _capture(["apt-get", "download", f"systemd-resolved={version}"], cwd=Path(tmp))
        debs = sorted(Path(tmp).glob("systemd-resolved_*.deb"))
        if done.returncode != 0 or not debs:
            raise HostError(
                f"expected `apt-get download systemd-resolved={version}` to fetch a .deb; it said: "
                f"{(done.stdout + done.stderr).strip()[-600:]!r}. Fix: `apt-get update`, and check that "
                f"`apt-cache policy systemd-resolved` lists {version} (never `apt-get install` it)"
            )
        staging = root.with_name(root.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        done = _capture(["dpkg-deb", "-x", str(debs[0]), str(staging)])
        if done.returncode != 0 or not (staging / RESOLVED_BINARY).exists():
            raise HostError(
                f"expected `dpkg-deb -x` to unpack {RESOLVED_BINARY} from {debs[0].name}; it said: "
                f"{done.stderr.strip()!r}. Fix: apt-get install dpkg"
            )
    (staging / EXTRACTED_MARKER).write_text(version)
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)


# ----------------------------------------------------------------------------------------------
# the files the host binds over /etc and /usr/share/dbus-1 inside its mount namespace

RESOLV_CONF = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n"

# No double hyphen may appear in an XML comment here: dbus-daemon refuses the whole file.
DBUS_SYSTEM_CONF = """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <user>messagebus</user>
  <fork/>
  <pidfile>/run/dbus/pid</pidfile>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/> <allow receive_type="method_return"/>
    <allow receive_type="error"/> <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
  </policy>
  <policy user="root"> <allow own="*"/> <allow send_type="method_call"/> </policy>
  <include>{resolved_root}/usr/share/dbus-1/system.d/org.freedesktop.resolve1.conf</include>
  <limit name="reply_timeout">5000</limit>
</busconfig>
"""


def _dnsmasq_conf(workdir: Path, run_as_dnsmasq: bool) -> str:
    lines = [DNSMASQ_CONF.rstrip("\n"), "pid-file=/run/dnsmasq/dnsmasq.pid", f"log-facility={workdir / 'dnsmasq.log'}"]
    if run_as_dnsmasq:  # without a dnsmasq user it stays root, which is fine inside the namespace
        lines += ["user=dnsmasq", "group=nogroup"]
    return "\n".join(lines) + "\n"


def _free_ids(passwd: str, group: str, count: int) -> list[int]:
    # An id unused as uid and as gid, so the new user and its group can share it.
    used = {int(line.split(":")[2]) for text in (passwd, group) for line in text.splitlines() if line.count(":") >= 3}
    free = [i for i in range(985, 100, -1) if i not in used]
    return free[:count]


def _with_users(passwd: str, group: str, names: list[str]) -> tuple[str, str]:
    """Add each name (if absent) as a system user with its own group."""
    missing = [n for n in names if not any(line.startswith(f"{n}:") for line in passwd.splitlines())]
    for name, uid in zip(missing, _free_ids(passwd, group, len(missing)), strict=True):
        passwd = passwd.rstrip("\n") + f"\n{name}:x:{uid}:{uid}:{name}:/:/usr/sbin/nologin\n"
        if not any(line.startswith(f"{name}:") for line in group.splitlines()):
            group = group.rstrip("\n") + f"\n{name}:x:{uid}:\n"
    return passwd, group


# ----------------------------------------------------------------------------------------------
# PID 1 inside the namespaces. Paths come through NSHOST_* variables, never spliced into the text.

INIT_SCRIPT = r"""
set -euo pipefail
trap 'echo "nshost: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
W=$NSHOST_WORKDIR

# Refuse to touch anything unless we really are PID 1 in fresh mount and network namespaces:
# every mount below would otherwise land on the real host.
[[ $$ == 1 ]] || { echo "nshost: refusing: not PID 1 (pid $$)" >&2; exit 90; }
[[ $(readlink /proc/self/ns/mnt) != "$NSHOST_PARENT_MNT" ]] || { echo "nshost: refusing: host mount ns" >&2; exit 91; }
[[ $(readlink /proc/self/ns/net) != "$NSHOST_PARENT_NET" ]] || { echo "nshost: refusing: host net ns" >&2; exit 92; }
trap 'kill -TERM -1 2>/dev/null; sleep 0.2; exit 0' TERM INT

mount -n --make-rprivate /
mount -n -t tmpfs -o mode=0755,nosuid,nodev,size=16m nsrun /run
mkdir -p /run/dbus /run/dnsmasq /run/lock /run/systemd /run/nshost
if [[ -n $NSHOST_DNSMASQ_USER ]]; then chown "$NSHOST_DNSMASQ_USER:nogroup" /run/dnsmasq; fi
# A private, writable /etc: an overlay whose writes land in the work directory. A runner's hook may add users
# here; useradd renames passwd, shadow, group and gshadow into place, which a bind of a single file refuses.
mkdir -p "$W/etc-upper" "$W/etc-work"
mount -n -t overlay -o "lowerdir=/etc,upperdir=$W/etc-upper,workdir=$W/etc-work" nsetc /etc

rc=$(readlink -m /etc/resolv.conf)
if [[ ! -e $rc ]]; then
  # Only create a missing target on our private /run tmpfs, never on the host's /etc.
  [[ $rc == /run/* ]] || { echo "nshost: refusing: $rc missing outside /run" >&2; exit 93; }
  mkdir -p "$(dirname "$rc")"; touch "$rc"
fi
mount -n --bind "$W/resolv.conf" "$rc"
cat "$W/passwd" > /etc/passwd
cat "$W/group" > /etc/group
mount -n --bind "$NSHOST_SYSTEMD_SRC" "$NSHOST_SYSTEMD_DST"
mount -n --bind "$W/dbus-system.conf" /usr/share/dbus-1/system.conf

bash -c "$NSHOST_VETH"

dnsmasq --conf-file="$W/dnsmasq.conf"
dbus-daemon --system --fork
for _ in $(seq 200); do [[ -S /run/dbus/system_bus_socket ]] && break; sleep 0.02; done
SYSTEMD_LOG_TARGET=console setsid "$NSHOST_RESOLVED_ROOT/lib/systemd/systemd-resolved" \
  >> "$W/resolved.log" 2>&1 < /dev/null &

state=fail
for _ in $(seq 200); do
  if getent hosts "$NSHOST_CANARY" > /dev/null; then state=ok; break; fi
  sleep 0.02
done
echo "$state" > "$W/ready.partial"; mv "$W/ready.partial" "$W/ready"

# PID 1 must reap orphans (restarted resolved, nsenter'd commands) until told to stop.
while :; do sleep 3600 & wait $! || true; done
"""


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()[-lines:]
    except FileNotFoundError:
        return f"--- {path.name}: (absent)"
    return f"--- {path.name}:\n" + "\n".join(text)


def _missing_commands() -> list[str]:
    return [name for name in COMMANDS if shutil.which(name) is None]


class NamespaceHost:
    """One disposable host; `with NamespaceHost(tmp).start() as host: host.run([...])`."""

    name: str = "namespace"
    disposable: bool = True  # destructive controls may run here  # how reports and `--host` name this kind of host

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir).resolve()
        self.boot_s = 0.0
        self.pid = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._resolved_root: Path | None = None
        self.restart_timeout_s = RESTART_TIMEOUT_S

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> NamespaceHost:
        missing = _missing_commands()
        if missing:
            packages = sorted({COMMANDS[m] for m in missing})
            raise HostError(
                f"expected {', '.join(COMMANDS)} on PATH; missing: {', '.join(missing)} "
                f"(packages {', '.join(packages)}). Fix: {APT_FIX}"
            )
        self._resolved_root = resolved_root()
        self.workdir.mkdir(parents=True, exist_ok=True)
        env = self._write_files(self._resolved_root)
        began = time.monotonic()
        with (self.workdir / "init.log").open("ab") as log:
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
            self._wait_ready(began)
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

    def enter(self) -> list[str]:
        if not self.pid:
            raise HostError("expected a started namespace host; call start() first")
        return ["nsenter", "-t", str(self.pid), "-m", "-n", "-p", "--"]

    def run(self, argv: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str]:
        return host_command(
            self.enter() + argv, timeout=timeout, what="a command inside the namespace host", fix=self._fix
        )

    def root(self) -> Path:
        """Its / is this machine's (only /run and /etc are its own), reached through its PID 1."""
        if not self.pid:
            raise HostError("expected a started namespace host; call start() first")
        return Path(f"/proc/{self.pid}/root")

    @property
    def _fix(self) -> str:
        return f"the host may be wedged: read init.log and resolved.log in {self.workdir}"

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

    # -- helpers --------------------------------------------------------------------------------

    def _stop_resolved(self) -> None:
        """SIGTERM (then SIGKILL) every resolved and wait until each has exited: a resolved started while
        one still holds 127.0.0.53:53 logs "Another process is already listening" and runs without a stub."""
        pids = [int(pid) for pid in self.run(["pgrep", "-x", RESOLVED_PROCESS]).stdout.split()]
        for sig in ("TERM", "KILL"):
            alive = [pid for pid in pids if not self._gone(pid)]
            if not alive:
                return
            self.run(["kill", f"-{sig}", *map(str, alive)])
            if _until(functools.partial(self._all_gone, alive), STOP_GRACE_S):
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
                os.chown(path, *_user_ids((self.workdir / "passwd").read_text(), "systemd-resolve"))  # dropped root
                yield sock
            finally:
                path.unlink()

    def _await_ready(self, notify: socket.socket, pid: int) -> None:
        deadline = time.monotonic() + self.restart_timeout_s
        while not self._gone(pid):
            if _says_ready(notify, POLL_S):
                return
            if time.monotonic() >= deadline:
                raise HostError(
                    f"namespace host in {self.workdir}: expected the restarted systemd-resolved (PID {pid} inside) "
                    f"to send READY=1 or exit within {self.restart_timeout_s:g} s; it still runs, not ready.\n"
                    f"{_tail(self.workdir / 'resolved.log')}\nFix: {self._fix}"
                )

    def _gone(self, pid: int) -> bool:
        """Whether a PID inside has exited and been reaped (read through the /proc mounted inside)."""
        return not Path(f"/proc/{self.pid}/root/proc/{pid}").exists()

    def _all_gone(self, pids: list[int]) -> bool:
        return all(self._gone(pid) for pid in pids)

    def _write_files(self, root: Path) -> dict[str, str]:
        w = self.workdir
        passwd, group = _with_users(
            Path("/etc/passwd").read_text(), Path("/etc/group").read_text(), ["systemd-resolve", "nsprobe"]
        )
        (w / "passwd").write_text(passwd)
        (w / "group").write_text(group)
        (w / "resolv.conf").write_text(RESOLV_CONF)
        (w / "dbus-system.conf").write_text(DBUS_SYSTEM_CONF.format(resolved_root=root))
        run_as_dnsmasq = any(line.startswith("dnsmasq:") for line in passwd.splitlines())
        (w / "dnsmasq.conf").write_text(_dnsmasq_conf(w, run_as_dnsmasq))
        (w / "init.sh").write_text(INIT_SCRIPT)
        src, dst = self._systemd_conf()
        return {
            **os.environ,
            "NSHOST_WORKDIR": str(w),
            "NSHOST_RESOLVED_ROOT": str(root),
            "NSHOST_PARENT_MNT": os.readlink("/proc/self/ns/mnt"),
            "NSHOST_PARENT_NET": os.readlink("/proc/self/ns/net"),
            "NSHOST_SYSTEMD_SRC": str(src),
            "NSHOST_SYSTEMD_DST": str(dst),
            "NSHOST_DNSMASQ_USER": "dnsmasq" if run_as_dnsmasq else "",
            "NSHOST_CANARY": CANARY_NAME,
            "NSHOST_VETH": VETH_SCRIPT,
        }

    def _systemd_conf(self) -> tuple[Path, Path]:
        """Our resolved.conf and where to bind it: the single file when the host has one, else all of /etc/systemd."""
        host = Path("/etc/systemd/resolved.conf")
        if host.exists():
            (self.workdir / "resolved.conf").write_text(RESOLVED_CONF)
            return self.workdir / "resolved.conf", host
        # A bind over a missing file would have to create it on the host's /etc; bind a copy of the directory.
        copy = self.workdir / "systemd"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree("/etc/systemd", copy, symlinks=True)
        (copy / "resolved.conf").write_text(RESOLVED_CONF)
        return copy, Path("/etc/systemd")

    def _find_init(self) -> int:
        """The host-view PID of the namespace's PID 1: the one child `unshare --fork` makes."""
        assert self._proc is not None
        children = Path(f"/proc/{self._proc.pid}/task/{self._proc.pid}/children")
        deadline = time.monotonic() + BOOT_TIMEOUT_S
        while time.monotonic() < deadline:
            with_pid = children.read_text().split() if children.exists() else []
            if with_pid:
                return int(with_pid[0])
            if self._proc.poll() is not None:
                break
            time.sleep(0.005)
        raise self._boot_error("the namespace's PID 1 to appear")

    def _wait_ready(self, began: float) -> None:
        assert self._proc is not None
        ready = self.workdir / "ready"
        while time.monotonic() - began < BOOT_TIMEOUT_S:
            if ready.exists():
                if ready.read_text().strip() == "ok":
                    return
                raise self._boot_error(f"`getent hosts {CANARY_NAME}` to answer inside")
            if self._proc.poll() is not None:
                raise self._boot_error("the init script to keep running")
            time.sleep(0.01)
        raise self._boot_error(f"the host to boot within {BOOT_TIMEOUT_S:.0f} s")

    def _boot_error(self, expected: str) -> HostError:
        code = None if self._proc is None else self._proc.poll()
        tails = "\n".join(_tail(self.workdir / name) for name in ("init.log", "resolved.log", "dnsmasq.log"))
        return HostError(
            f"namespace host in {self.workdir}: expected {expected}; saw (init exit code {code}):\n{tails}\n"
            "Fix: read the log tails above; a resolved version mismatch or a missing system user "
            "(messagebus, systemd-resolve) are the usual causes; `boundary doctor` checks the commands."
        )


def _user_ids(passwd: str, name: str) -> tuple[int, int]:
    uid, gid = next(line.split(":")[2:4] for line in passwd.splitlines() if line.startswith(f"{name}:"))
    return int(uid), int(gid)


def _says_ready(notify: socket.socket, timeout_s: float) -> bool:
    """Whether a datagram arrives on the notify socket within the timeout and has a READY=1 line."""
    if not select.select([notify], [], [], timeout_s)[0]:
        return False
    return b"READY=1" in notify.recv(4096).split(b"\n")


def _until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Poll a condition until it holds (True) or the timeout passes (False)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone: that is what we wanted
        os.kill(pid, sig)
