"""The namespace host, for real: it boots, reproduces incident 3 inside, and leaves the real host alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from boundary.host.base import CANARY_ADDRESS, CANARY_NAME, HostError
from boundary.host.namespace import NamespaceHost
from boundary.toolchain import tools

AS_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
BUS_LIST = ["busctl", "--system", "list"]


@pytest.fixture
def host(tmp_path):
    with NamespaceHost(tmp_path / "host").start() as started:
        yield started


# The container runtimes' own state: a network namespace file and a shim socket come and go (and change mode)
# whenever any container on the machine starts or stops — the container host's tests run beside this one, and
# once made this test fail — while the namespace host never uses Docker.
CONTAINER_RUNTIME_STATE = ("/run/docker", "/run/containerd")


def run_snapshot() -> dict[str, tuple[int, int, int]]:
    """Every entry under the host's /run (links not followed) but the container runtimes' own state:
    path -> (mode, uid, gid)."""
    seen: dict[str, tuple[int, int, int]] = {}
    for top, dirs, files in os.walk("/run", followlinks=False):
        dirs[:] = [name for name in dirs if os.path.join(top, name) not in CONTAINER_RUNTIME_STATE]
        for name in dirs + files:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            seen[path] = (st.st_mode, st.st_uid, st.st_gid)
    return seen


def processes_in_pid_namespace(ns: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "pid") == ns:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_boots_with_dns_and_a_bus_for_root_and_nobody(host):
    assert 0 < host.boot_s < 15
    answer = host.run(["getent", "hosts", CANARY_NAME])
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.split()[0] == CANARY_ADDRESS
    for prefix in ([], AS_NOBODY):
        listed = host.run(prefix + BUS_LIST)
        assert listed.returncode == 0, listed.stderr
        assert "org.freedesktop.resolve1" in listed.stdout
    assert host.resolved_running()


def test_real_run_is_untouched_by_boot_chmod_and_stop(tmp_path):
    before = run_snapshot()
    with NamespaceHost(tmp_path / "host").start() as host:
        assert host.run(["chmod", "0700", "/run/dbus/system_bus_socket"]).returncode == 0
    assert run_snapshot() == before


def test_incident_3_inside_chmod_then_resolved_restart_kills_dns(host):
    assert host.run(["chmod", "0700", "/run/dbus/system_bus_socket"]).returncode == 0
    assert host.run(BUS_LIST).returncode == 0, "root passes through a 0700 socket"
    as_nobody = host.run(AS_NOBODY + BUS_LIST)
    assert as_nobody.returncode != 0
    assert "Permission denied" in as_nobody.stderr
    assert host.run(["getent", "hosts", CANARY_NAME]).returncode == 0, "nothing broke at once"

    host.restart_resolved()
    assert not host.resolved_running()
    assert host.run(["getent", "hosts", CANARY_NAME]).returncode != 0
    assert "Permission denied" in (host.workdir / "resolved.log").read_text()


@pytest.fixture
def slow_setsid(tmp_path, monkeypatch):
    """A setsid that execs 0.3 s late: what a loaded machine does between a fork and its exec.

    Until the exec the restarted resolved is a process named `setsid`, not `systemd-resolve`.
    """
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir()
    (bin_dir / "setsid").write_text(f'#!/bin/sh\nsleep 0.3\nexec {shutil.which("setsid")} "$@"\n')
    (bin_dir / "setsid").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def stub_serves(host: NamespaceHost) -> bool:
    """The canary resolves through the stub (resolv.conf names only 127.0.0.53) and both stub ports listen."""
    answered = host.run(["getent", "hosts", CANARY_NAME]).returncode == 0
    listening = host.run(["ss", "-Hlntu", "src", "127.0.0.53", "sport", "53"]).stdout
    return answered and "tcp" in listening and "udp" in listening


def test_restart_returns_once_the_new_resolved_serves_its_stub_even_when_its_exec_is_slow(slow_setsid, tmp_path):
    with NamespaceHost(tmp_path / "host").start() as host:
        host.restart_resolved()
        assert stub_serves(host), (host.workdir / "resolved.log").read_text()[-500:]


def test_restart_right_after_boot_serves_the_stub_every_time(host):
    for attempt in range(10):
        host.restart_resolved()
        assert stub_serves(host), f"restart {attempt}: " + (host.workdir / "resolved.log").read_text()[-500:]
    assert "already listening" not in (host.workdir / "resolved.log").read_text()
    assert host.run(["ls", "-A", "/run/nshost"]).stdout == "", "the notify socket must not stay under /run"


def test_restart_kills_a_resolved_that_ignores_sigterm_before_starting_the_next(host):
    old = host.run(["pgrep", "-x", "systemd-resolve"]).stdout.split()
    assert host.run(["kill", "-STOP", *old]).returncode == 0  # SIGTERM now waits; only SIGKILL ends it
    host.restart_resolved()
    assert stub_serves(host)
    assert old[0] not in host.run(["pgrep", "-x", "systemd-resolve"]).stdout.split()
    assert "already listening" not in (host.workdir / "resolved.log").read_text()


def test_restart_names_a_resolved_that_neither_gets_ready_nor_exits(host, tmp_path):
    binary = tmp_path / "stuck" / "lib" / "systemd" / "systemd-resolved"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\necho 'stuck before READY=1'\nsleep 60\n")
    binary.chmod(0o755)
    host._resolved_root, host.restart_timeout_s = tmp_path / "stuck", 0.5
    expected = r"(?s)expected the restarted systemd-resolved .* READY=1 or exit within 0.5 s.*stuck before READY.*Fix"
    with pytest.raises(HostError, match=expected):
        host.restart_resolved()


def test_stop_leaves_no_process(tmp_path):
    workdir = tmp_path / "host"
    host = NamespaceHost(workdir).start()
    pid = host.pid
    ns = os.readlink(f"/proc/{pid}/ns/pid")
    assert len(processes_in_pid_namespace(ns)) >= 3  # init, dnsmasq, dbus-daemon, resolved
    host.stop()
    host.stop()  # idempotent
    assert not Path(f"/proc/{pid}").exists()
    assert processes_in_pid_namespace(ns) == []
    found = subprocess.run(["pgrep", "-f", str(workdir)], capture_output=True, text=True, check=False)
    assert found.stdout == ""


def test_missing_command_names_the_apt_fix(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("unshare", "nsenter", "setpriv", "ip", "dbus-daemon", "bash"):
        found = subprocess.run(["which", name], capture_output=True, text=True, check=True).stdout.strip()
        (bin_dir / name).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    host = NamespaceHost(tmp_path / "host")
    with pytest.raises(HostError, match=r"missing: dnsmasq.*apt-get install .*dnsmasq-base"):
        host.start()
    assert host.pid == 0
    assert not (tmp_path / "host").exists(), "nothing is written before the checks pass"


def test_a_killed_harness_leaves_no_host_running(tmp_path: Path) -> None:
    """A run killed outright (SIGKILL, a cancelled CI job) takes its namespace host with it: dbus-daemon,
    systemd-resolved and the rest die with the host's PID 1, which dies with the harness."""
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from boundary.host.namespace import NamespaceHost; "
            f"h = NamespaceHost({str(tmp_path / 'host')!r}).start(); print(h.pid, flush=True); time.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    ) as harness:
        assert harness.stdout is not None
        init = int(harness.stdout.readline())
        inside = psutil.Process(init).children(recursive=True)
        assert inside, "expected the host's daemons under its PID 1"
        harness.kill()
    _gone, alive = psutil.wait_procs([psutil.Process(init), *inside], timeout=10)
    assert not alive, f"expected the host to die with the harness; still running: {[p.cmdline() for p in alive]}"


def test_the_own_roots_overlays_are_volatile_so_stop_never_waits_on_the_disk(host):
    # Without it an overlay's unmount at stop() syncs the filesystem under it: on a disk busy with another test's
    # writes that took longer than stop()'s grace and its SIGKILL (a process in D state). The directories bound
    # through are the machine's own, whatever they are (in a container, boundary's cache may be Docker's overlay).
    through = {str(host.workdir.parent), str(tools.cache_root())}
    overlays = host.run(["findmnt", "-rn", "-t", "overlay", "-o", "TARGET,OPTIONS"]).stdout.splitlines()
    assert any(line.startswith("/ ") for line in overlays), overlays
    for line in (line for line in overlays if line.split()[0] not in through):
        options = set(line.split()[-1].split(","))
        assert {"volatile", "fsync=volatile"} & options, line  # older kernels: "volatile"


BOUND_OVER_ETC = """
import subprocess, sys
from pathlib import Path
from boundary.host.namespace import NamespaceHost
work, bound = Path(sys.argv[1]), Path(sys.argv[2])
subprocess.run(["mount", "--bind", str(bound), "/etc/hostname"], check=True)
with NamespaceHost(work / "host").start() as host:
    print(host.run(["cat", "/etc/hostname"]).stdout.strip())
"""


def test_files_bound_over_the_hosts_etc_are_in_its_private_etc(tmp_path: Path) -> None:
    """In a container, Docker binds hosts, hostname and resolv.conf over /etc: the private /etc (an overlay on the
    directory beneath them) must show what the host shows, or a job in a container resolves no `localhost`."""
    bound = tmp_path / "hostname"
    bound.write_text("bound-over-etc\n")
    argv = ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", BOUND_OVER_ETC]
    done = subprocess.run([*argv, str(tmp_path), str(bound)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "bound-over-etc"
