"""The host seams: kinds of host by capability, one record per host check, the host's reported properties."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from boundary.host import HOST_KINDS, HOST_MODES, HostKind, health, make_host
from boundary.host.checks import HOST_CHECKS
from boundary.host.health import CHECKS, HostHealth, checks_for, host_report, judge
from boundary.host.live import LiveHost
from boundary.host.properties import HOST_PROPERTIES, LEGACY_TIOCSTI, read_sysctl, tiocsti_meaning


@pytest.mark.parametrize("mode", HOST_MODES)
def test_each_kind_makes_an_unstarted_host_that_agrees_with_its_record(mode: str, tmp_path: Path) -> None:
    kind = HOST_KINDS[mode]
    host = make_host(mode, tmp_path, progress=lambda line: None)
    assert host.name == kind.name and host.disposable == kind.disposable


def test_an_unknown_kind_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"--host: expected one of namespace, container, live; got 'vm'"):
        make_host("vm", tmp_path)


def test_checks_follow_the_kinds_capabilities_not_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new kind without systemd is asked for everything but `services`; an unknown one for everything."""
    vm = HostKind("vm", "boundary.host.live:new_host", runs_systemd=False, disposable=True)
    monkeypatch.setitem(HOST_KINDS, "vm", vm)
    assert checks_for("vm") == checks_for("namespace") == tuple(c for c in CHECKS if c != "services")
    assert checks_for("container") == checks_for("live") == checks_for("never-heard-of") == CHECKS


def test_one_record_per_check_each_probe_read_by_one_check() -> None:
    names = [check.name for check in HOST_CHECKS]
    keys = [probe.key for check in HOST_CHECKS for probe in check.probes]
    assert names == list(CHECKS) and len(set(names)) == len(names) and len(set(keys)) == len(keys)
    assert [check.name for check in HOST_CHECKS if check.needs_systemd] == ["services"]
    assert {check.name for check in HOST_CHECKS if check.full_only} == {"run_sockets", "processes", "listeners"}


def sample(tiocsti: str | None = "1") -> dict[str, object]:
    ok = {"ok": True, "value": ["10.213.0.99"], "s": 0.001}
    bus = {"ok": True, "value": ["org.freedesktop.DBus"], "s": 0.001}
    return {
        "at": 0.0,
        "bus_root": bus,
        "bus_nobody": bus,
        "dns_system": ok,
        "dns_nobody": ok,
        "dns_stub": ok,
        "resolver": True,
        "services": None,
        "sockets": {},
        "processes": ["1 init"],
        "listeners": [],
        "legacy_tiocsti": tiocsti,
    }


def report_of(*samples: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    health_ = HostHealth(host=LiveHost(), units=())
    taken = iter(samples)
    monkeypatch.setattr(health_, "_sample", lambda full: next(taken))
    for when in ("at baseline", *(f"after job-{n}" for n in range(1, len(samples)))):
        health_.take(when)
    return host_report("namespace", 0.1, health_)


def test_tiocsti_is_reported_with_its_meaning_and_fails_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 19: a job's terminal can be typed into where the sysctl is 1 — a property of the host, said, not judged."""
    report = report_of(sample("1"), sample("1"), monkeypatch=monkeypatch)
    assert report["properties"] == {LEGACY_TIOCSTI: {"value": "1", "meaning": tiocsti_meaning("1")}}
    checks = report["checks"]
    assert isinstance(checks, dict) and all(state["ok"] for state in checks.values()) and report["chain"] == []
    assert judge(sample("1"), sample("0")) == {}


def test_tiocsti_absent_means_an_old_kernel_and_a_change_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    absent = report_of(sample(None), sample(None), monkeypatch=monkeypatch)["properties"]
    assert absent == {LEGACY_TIOCSTI: {"value": None, "meaning": tiocsti_meaning(None)}}
    assert "older than 6.2" in tiocsti_meaning(None) and "always allowed" in tiocsti_meaning(None)
    changed = report_of(sample("0"), sample("1"), monkeypatch=monkeypatch)["properties"]
    assert changed == {LEGACY_TIOCSTI: {"value": "0", "meaning": tiocsti_meaning("0"), "after": "1"}}


def test_a_sample_without_properties_reports_none() -> None:
    assert health.host_properties(None, None) == {}
    without = {key: value for key, value in sample().items() if key != "legacy_tiocsti"}
    assert health.host_properties(without, without) == {}


def test_the_property_is_read_from_the_kernel_the_probe_runs_on(tmp_path: Path) -> None:
    (prop,) = HOST_PROPERTIES
    real = Path("/proc/sys/dev/tty/legacy_tiocsti")
    assert prop.read() == (real.read_text().strip() if real.exists() else None)
    (tmp_path / "dev" / "tty").mkdir(parents=True)
    (tmp_path / "dev" / "tty" / "legacy_tiocsti").write_text("0\n")
    assert read_sysctl(LEGACY_TIOCSTI, tmp_path) == "0" and read_sysctl("dev.tty.nothing", tmp_path) is None


# --- the boot waits, on proc.wait_until ------------------------------------------------------------------


def test_container_boot_waits_past_offline_and_names_the_state_it_gave_up_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from types import SimpleNamespace

    from boundary.host import container
    from boundary.host.base import HostError

    host = container.ContainerHost(tmp_path, tmp_path)
    host._container = SimpleNamespace(get_wrapped_container=lambda: SimpleNamespace(short_id="c0ffee"))
    monkeypatch.setattr(host, "run", lambda argv, timeout=10: _done(""))  # getent resolves; no unit failed
    states = iter(["", "offline", "running"])
    monkeypatch.setattr(host, "_system_state", lambda: next(states))
    host._wait_ready()  # running after two polls
    monkeypatch.setattr(container, "BOOT_TIMEOUT_S", 0.1)
    monkeypatch.setattr(host, "_system_state", lambda: "offline")
    with pytest.raises(HostError, match=r"expected systemd to reach 'running'; saw 'offline'.*docker logs c0ffee"):
        host._wait_ready()


def _done(stdout: str) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess([], 0, stdout, "")


@pytest.mark.parametrize(
    ("ready", "alive", "expected"),
    [
        ("ok", True, None),
        ("fail", True, "`getent hosts canary.boundary.test` to answer inside"),
        (None, False, "the init script to keep running"),
        (None, True, "the host to boot within 15 s"),
    ],
)
def test_namespace_boot_wait_tells_ready_failed_dead_and_slow_apart(
    tmp_path: Path, ready: str | None, alive: bool, expected: str | None
) -> None:
    from boundary.host.base import HostError
    from boundary.host.namespace import NamespaceHost

    host = NamespaceHost(tmp_path)
    host._proc = subprocess.Popen(["sleep", "5" if alive else "0"])
    try:
        if not alive:
            host._proc.wait()
        if ready is not None:
            (tmp_path / "ready").write_text(ready + "\n")
        if expected is None:
            host._wait_ready(0.2)
        else:
            with pytest.raises(HostError, match=re.escape(expected)):
                host._wait_ready(0.2)
    finally:
        host._proc.kill()
        host._proc.wait()
