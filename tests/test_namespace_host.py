"""The namespace host, for real: it boots, reproduces incident 3 inside, and leaves the real host alone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from boundary.host.base import CANARY_ADDRESS, CANARY_NAME, HostError
from boundary.host.namespace import NamespaceHost

AS_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
BUS_LIST = ["busctl", "--system", "list"]


@pytest.fixture
def host(tmp_path):
    with NamespaceHost(tmp_path / "host").start() as started:
        yield started


def run_snapshot() -> dict[str, tuple[int, int, int]]:
    """Every entry under the host's /run (links not followed): path -> (mode, uid, gid)."""
    seen: dict[str, tuple[int, int, int]] = {}
    for top, dirs, files in os.walk("/run", followlinks=False):
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
