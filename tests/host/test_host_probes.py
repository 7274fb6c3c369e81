"""The host probes' own logic: who can reach a socket, what a diff names, how services and ports are judged."""

from __future__ import annotations

import socket
import struct
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary.host import services as services_module
from boundary.host.health import CHECKS, HostHealth, checks_for, judge, not_applicable, summarize
from boundary.host.live import LiveHost
from boundary.host.processes import listener_diff, process_diff
from boundary.host.run_sockets import (
    GROUP,
    GROUP_OBJ,
    MASK,
    OTHER,
    USER,
    USER_OBJ,
    WRITE,
    Identity,
    Node,
    acl_text,
    identities,
    permits,
    run_sockets,
    socket_diff,
)
from boundary.host.services import service_problems, services

ROOT = Identity("root", 0, frozenset({0}))
NOBODY = Identity("nobody", 65534, frozenset({65534}))
MEMBER = Identity("messagebus", 100, frozenset({100, 101}))


def acl(*entries: tuple[int, int, int]) -> bytes:
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


def test_mode_bits_decide_without_an_acl() -> None:
    """Incident 3's chmod: 0777 → 0700 takes the socket from everyone but its owner and root."""
    open_socket, closed = Node(0o777, 0, 0, None), Node(0o700, 0, 0, None)
    assert permits(open_socket, NOBODY, WRITE) and not permits(closed, NOBODY, WRITE)
    assert permits(closed, ROOT, WRITE), "root passes a 0700 socket: why the bus is probed as nobody too"
    assert permits(Node(0o660, 0, 101, None), MEMBER, WRITE) and not permits(Node(0o660, 0, 101, None), NOBODY, WRITE)


def test_a_named_user_acl_entry_denies_that_user_only() -> None:
    """The later drop-sudo fix: `setfacl -m u:<uid>:---` leaves the mode alone, so mode checks miss it."""
    entries = acl((USER_OBJ, 6, 0), (USER, 0, 65534), (GROUP_OBJ, 6, 0), (MASK, 6, 0), (OTHER, 6, 0))
    node = Node(0o666, 0, 0, entries)
    assert not permits(node, NOBODY, WRITE)
    assert permits(node, MEMBER, WRITE)
    assert acl_text(entries.hex()) == "u::rw-,u:65534:---,g::rw-,m::rw-,o::rw-"


def test_the_acl_mask_limits_named_groups() -> None:
    entries = acl((USER_OBJ, 6, 0), (GROUP, 6, 101), (GROUP_OBJ, 0, 0), (MASK, 4, 0), (OTHER, 0, 0))
    assert not permits(Node(0o640, 0, 0, entries), MEMBER, WRITE)


def test_identities_include_supplementary_groups(tmp_path: Path) -> None:
    (tmp_path / "passwd").write_text("root:x:0:0::/root:/bin/sh\nalice:x:1000:1000::/home/alice:/bin/sh\n")
    (tmp_path / "group").write_text("root:x:0:\nalice:x:1000:\ndocker:x:111:alice\n")
    found = {who.name: who for who in identities(str(tmp_path / "passwd"), str(tmp_path / "group"))}
    assert found["alice"].gids == {1000, 111}


@pytest.fixture
def bound_socket() -> Iterator[tuple[Path, Path]]:
    # Not under pytest's tmp_path: its parents are 0700, which (rightly) keeps nobody out of everything below.
    with tempfile.TemporaryDirectory(prefix="boundary-sockets-") as name:
        directory = Path(name)
        directory.chmod(0o755)
        path = directory / "service.sock"
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(path))
            path.chmod(0o666)
            yield directory, path


def test_snapshot_reads_acls_and_names_who_lost_the_socket(bound_socket: tuple[Path, Path]) -> None:
    """A real socket, a real setfacl: the diff names the ACL change and the user it locked out."""
    directory, path = bound_socket
    users = [ROOT, NOBODY]
    before = run_sockets(str(directory), users)
    assert before[str(path)]["reach"] == ["nobody", "root"]
    subprocess.run(["setfacl", "-m", "u:65534:---", str(path)], check=True)
    after = run_sockets(str(directory), users)
    diff = socket_diff(before, after)
    assert f"{path}: acl none→u::rw-,u:65534:---,g::rw-,m::rw-,o::rw-, no longer reachable by nobody" == diff


def test_socket_diff_names_mode_changes_and_ignores_a_new_inode() -> None:
    old = {"/run/a.sock": {"ino": 1, "mode": "0666", "uid": 0, "gid": 0, "acl": None, "reach": ["nobody", "root"]}}
    restarted = {"/run/a.sock": {**old["/run/a.sock"], "ino": 2}}
    chmodded = {"/run/a.sock": {**old["/run/a.sock"], "mode": "0600", "reach": ["root"]}}
    assert socket_diff(old, restarted) == ""
    assert socket_diff(old, chmodded) == "/run/a.sock: mode 0666→0600, no longer reachable by nobody"
    assert socket_diff(old, {}) == "/run/a.sock vanished"


def test_processes_and_listeners_are_compared_by_name_not_pid() -> None:
    assert process_diff(["1 init", "7 dbus-daemon"], ["1 init", "9 dbus-daemon"]) == ""
    assert process_diff(["1 init"], ["1 init", "40 sleep"]) == "left running: 40 sleep"
    before = ["udp 127.0.0.53:53 (systemd-resolve)"]
    after = [*before, "tcp 127.0.0.1:7777 (socat)"]
    assert listener_diff(before, after) == "new listener: tcp 127.0.0.1:7777 (socat)"
    assert listener_diff(before, []) == "gone: udp 127.0.0.53:53 (systemd-resolve)"


def unit(active: str = "active", restarts: int = 0, result: str = "success", load: str = "loaded") -> dict[str, str]:
    return {"LoadState": load, "ActiveState": active, "Result": result, "NRestarts": str(restarts)}


def test_services_fail_on_failure_restart_or_absence() -> None:
    base = {"systemd-resolved.service": unit()}
    assert service_problems(base, base) == ""
    assert service_problems(base, {"systemd-resolved.service": unit("failed", 5, "exit-code")}) == (
        "systemd-resolved.service: failed (Result=exit-code)"
    )
    assert service_problems(base, {"systemd-resolved.service": unit(restarts=1, result="watchdog")}) == (
        "systemd-resolved.service: restarted 1× by systemd (Result=watchdog)"
    )
    assert "not-found" in service_problems(None, {"x.service": unit(load="not-found", active="inactive")})
    assert service_problems(None, None) == ""


def test_without_systemd_services_are_not_applicable_never_held() -> None:
    """This machine runs no systemd: the probe says so (None), and the report names the host that can check."""
    assert services() is None
    baseline = {"services": None}
    assert "--host container" in not_applicable(baseline)["services"]
    assert "services" not in checks_for("namespace") and checks_for("container") == CHECKS


def healthy_sample() -> dict[str, object]:
    ok = {"ok": True, "value": ["10.213.0.99"], "s": 0.001}
    return {
        "at": 0.0,
        "bus_root": {"ok": True, "value": ["org.freedesktop.DBus"], "s": 0.001},
        "bus_nobody": {"ok": True, "value": ["org.freedesktop.DBus"], "s": 0.001},
        "dns_system": ok,
        "dns_nobody": ok,
        "dns_stub": ok,
        "resolver": True,
        "services": {"dbus.service": unit()},
        "sockets": {},
        "processes": ["1 systemd"],
        "listeners": ["udp 127.0.0.53:53 (systemd-resolve)"],
    }


def test_judge_names_every_failed_check_and_summaries_read_before_after() -> None:
    baseline = healthy_sample()
    broken = {
        **baseline,
        "bus_nobody": {"ok": False, "error": "PermissionError: [Errno 13] Permission denied", "s": 0.0},
        "listeners": [*baseline["listeners"], "tcp 0.0.0.0:7777 (socat)"],  # type: ignore[list-item]
        "services": {"dbus.service": unit("failed", 0, "signal")},
    }
    assert judge(baseline, baseline) == {}
    assert set(judge(baseline, broken)) == {"system_bus_nobody", "listeners", "services"}
    assert summarize("dns", baseline) == "system 10.213.0.99, nobody 10.213.0.99, stub 10.213.0.99"
    assert summarize("system_bus_nobody", broken) == "refused"
    assert summarize("services", broken) == "dbus.service failed (0 restarts)"


def test_a_new_invocation_is_a_restart_unless_the_harness_made_it() -> None:
    """A bus killed and socket-activated again keeps NRestarts at 0; its InvocationID still changes."""
    base = {"dbus.service": {**unit(), "InvocationID": "a"}}
    again = {"dbus.service": {**unit(), "InvocationID": "b"}}
    assert "new invocation" in service_problems(base, again)
    assert service_problems(base, again, frozenset({"dbus.service"})) == ""


def test_a_socket_taken_from_many_users_names_the_bus_peers_first() -> None:
    users = ["_apt", "backup", "bin", "daemon", "messagebus", "nobody", "root", "systemd-resolve", "www-data"]
    old = {"/run/dbus/system_bus_socket": {"mode": "0666", "uid": 0, "gid": 0, "acl": None, "reach": users}}
    new = {"/run/dbus/system_bus_socket": {**old["/run/dbus/system_bus_socket"], "mode": "0600", "reach": ["root"]}}
    assert socket_diff(old, new) == (
        "/run/dbus/system_bus_socket: mode 0666→0600, root only now "
        "(8 users lost it: messagebus, nobody, systemd-resolve, _apt, backup and 3 more)"
    )


def test_a_sample_missing_a_check_fails_that_check() -> None:
    """A probe that gave no result proves nothing held: its check fails, naming the sample and the result."""
    baseline = healthy_sample()
    partial = {key: value for key, value in baseline.items() if key not in ("dns_stub", "listeners", "resolver")}
    found = judge(baseline, partial, when="after cross_job.job-a")
    assert set(found) == {"dns", "listeners", "resolver"}
    assert found["dns"] == "the sample (after cross_job.job-a) has no result for dns_stub"
    assert found["listeners"] == "the sample (after cross_job.job-a) has no result for listeners"


def test_a_malformed_probe_result_is_no_result() -> None:
    baseline = healthy_sample()
    assert "has no result for bus_root" in judge(baseline, {**baseline, "bus_root": {"s": 0.1}})["system_bus_root"]


def test_a_cheap_sample_needs_no_full_probes_but_a_full_one_does() -> None:
    cheap = {key: value for key, value in healthy_sample().items() if key not in ("sockets", "processes", "listeners")}
    assert judge(healthy_sample(), cheap, full=False) == {}
    assert set(judge(healthy_sample(), cheap)) == {"run_sockets", "processes", "listeners"}


def test_a_sample_missing_a_unit_fails_services() -> None:
    """A watched unit that is in neither the baseline nor the sample, or left the sample, is never held."""
    baseline = healthy_sample()
    assert judge(baseline, {**baseline, "services": {}})["services"] == ("the sample has no result for dbus.service")
    watched = judge(baseline, baseline, units=("dbus.service", "systemd-resolved.service"))
    assert watched["services"] == "the sample has no result for systemd-resolved.service"


def test_services_gone_after_a_baseline_that_had_them_fail() -> None:
    baseline = healthy_sample()
    assert "has no result for services" in judge(baseline, {**baseline, "services": None})["services"]
    no_systemd = {**baseline, "services": None}
    assert "services" not in judge(no_systemd, no_systemd)


def test_health_records_a_missing_check_as_a_failure_when_it_was_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    health = HostHealth(host=LiveHost(), units=("dbus.service",))
    samples = iter([healthy_sample(), {k: v for k, v in healthy_sample().items() if k != "bus_nobody"}])
    monkeypatch.setattr(health, "_sample", lambda full: next(samples))
    health.take("at baseline")
    health.take("after cross_job.job-a")
    failure = health.failures["system_bus_nobody"]
    assert failure.when == "after cross_job.job-a" and "has no result for bus_nobody" in failure.detail
    assert summarize("system_bus_nobody", health.last) == "no result"


def test_services_name_a_unit_systemctl_gave_no_block_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services_module, "systemd_runs", lambda: True)
    shown = "Id=dbus.service\nLoadState=loaded\nActiveState=active\n"
    done = subprocess.CompletedProcess[str]([], 0, shown, "")
    monkeypatch.setattr(services_module.proc, "run", lambda *args, **kwargs: done)
    found = services(("dbus.service", "systemd-resolved.service"))
    assert found is not None and found["dbus.service"]["ActiveState"] == "active"
    assert "error" in found["systemd-resolved.service"]
