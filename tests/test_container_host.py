"""The container host, for real: systemd boots, incident 3 unfolds by itself, nothing is left behind.

These need a Docker engine; without one they fail with the reason and the fix (`.ci/run` starts one).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary.host import image
from boundary.host.base import CANARY_ADDRESS, CANARY_NAME, HostError
from boundary.host.container import ContainerHost, shared_paths
from boundary.sabotage.runners import DROP_SUDO

AS_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
BUS_LIST = ["busctl", "--system", "list", "--no-pager"]
RESOLVED = "systemd-resolved.service"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[ContainerHost]:
    started = ContainerHost(tmp_path / "host", tmp_path).start()
    try:
        yield started
    finally:
        started.stop()


def unit_state(host: ContainerHost, unit: str) -> dict[str, str]:
    shown = host.run(["systemctl", "show", "--property=ActiveState,Result,NRestarts", unit]).stdout
    return dict(line.split("=", 1) for line in shown.splitlines())


def test_boots_systemd_with_dns_and_a_bus_for_root_and_nobody(host: ContainerHost) -> None:
    assert 0 < host.boot_s < 30
    assert host.run(["cat", "/proc/1/comm"]).stdout.strip() == "systemd"
    answer = host.run(["getent", "hosts", CANARY_NAME])
    assert answer.stdout.split()[0] == CANARY_ADDRESS, answer.stderr
    for prefix in ([], AS_NOBODY):
        listed = host.run(prefix + BUS_LIST)
        assert "org.freedesktop.resolve1" in listed.stdout, listed.stderr
    assert unit_state(host, RESOLVED) == {"ActiveState": "active", "Result": "success", "NRestarts": "0"}


def test_jobs_see_the_agent_stack_at_the_same_paths(host: ContainerHost, tmp_path: Path) -> None:
    """Python and the run's directory are bind-mounted where they are here, so jobs run the versions under test."""
    (tmp_path / "from-outside").write_text("shared")
    assert host.run(["cat", str(tmp_path / "from-outside")]).stdout == "shared"
    assert host.run([sys.executable, "-c", "print('inside')"]).stdout.strip() == "inside"
    assert host.run(["touch", f"{sys.prefix}/boundary-write-probe"]).returncode != 0, "the stack is read-only"


def test_incident_3_resolved_dies_by_itself_after_the_chmod(host: ContainerHost) -> None:
    """The drop-sudo chmod, then nothing from us: the watchdog kills resolved, which cannot come back; DNS dies."""
    assert host.run([sys.executable, "-c", DROP_SUDO]).returncode == 0
    assert host.run(BUS_LIST).returncode == 0, "root passes through a 0700 socket"
    assert "Permission denied" in host.run(AS_NOBODY + BUS_LIST).stderr
    deadline = time.monotonic() + 4 * image.WATCHDOG_S
    while unit_state(host, RESOLVED)["ActiveState"] != "failed" and time.monotonic() < deadline:
        time.sleep(0.5)
    state = unit_state(host, RESOLVED)
    assert state["ActiveState"] == "failed" and int(state["NRestarts"]) > 0, state
    assert host.run(["getent", "hosts", CANARY_NAME]).returncode != 0


def test_stop_removes_the_container(tmp_path: Path) -> None:
    host = ContainerHost(tmp_path / "host", tmp_path).start()
    pid = host.pid
    host.stop()
    host.stop()  # idempotent
    assert not Path(f"/proc/{pid}").exists()
    listed = subprocess.run(
        ["docker", "ps", "-a", "-q", "--filter", "label=boundary.host"], capture_output=True, text=True, check=True
    )
    assert listed.stdout.strip() == ""


def test_without_docker_it_fails_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HostError, match=r"--host container: no `docker` command.*apt-get install docker.io.*dockerd"):
        ContainerHost(tmp_path / "host", tmp_path).start()


def test_image_tag_follows_the_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = image.image_tag("bookworm")
    assert tag.startswith("boundary-host:") and tag == image.image_tag("bookworm")
    assert image.image_tag("trixie") != tag
    monkeypatch.setitem(image.FILES, "etc/boundary/extra", "x")
    assert image.image_tag("bookworm") != tag


def test_shared_paths_keep_parents_only(tmp_path: Path) -> None:
    paths = shared_paths(tmp_path)
    assert paths[tmp_path.resolve()] == "rw"
    assert all(mode == "ro" for path, mode in paths.items() if path != tmp_path.resolve())
    assert not any(a != b and a.is_relative_to(b) for a in paths for b in paths)


def test_a_run_directory_inside_a_read_only_path_stays_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("boundary.tools.cache_root", lambda: tmp_path)
    session = tmp_path / "runs" / "one"
    paths = shared_paths(session)
    assert paths[tmp_path.resolve()] == "ro" and paths[session.resolve()] == "rw"
