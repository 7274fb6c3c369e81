"""The podman example's plan for a host (examples/runners/podman/host.mjs), from recorded host files: the runtime it
picks for each cgroup layout, and what it refuses with a fix rather than leave to 47 jobs that exit 126."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from paths import ROOT, TESTS

from boundary.toolchain import tools

HOST_MJS = ROOT / "examples" / "runners" / "podman" / "host.mjs"
SAMPLES = TESTS / "podman_hosts"
# /proc/self/status CapEff lines: a full root's, and this kind of CI machine's root (no CAP_SYS_RESOURCE, bit 24).
FULL_ROOT = "CapEff:\t000001ffffffffff\n"
NO_SYS_RESOURCE = "CapEff:\t000001fffeffffff\n"


def host_mjs(expression: str, **values: Any) -> Any:
    """`expression` evaluated by node with host.mjs's exports in scope and `values` bound as JSON."""
    bound = "".join(f"const {name} = {json.dumps(value)};\n" for name, value in values.items())
    script = f"import * as host from {json.dumps(HOST_MJS.as_uri())};\n{bound}console.log(JSON.stringify({expression}))"
    argv = [str(tools.node()), "--input-type=module", "-e", script]  # the pinned node: host.mjs needs 24
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def plan(sample: str, controllers: list[str], runc: bool = True) -> dict[str, Any]:
    mountinfo = (SAMPLES / f"{sample}.mountinfo").read_text()
    expression = "host.planFor({ layout: host.cgroupLayout(mountinfo), controllers, rlimits: false, runc })"
    result: dict[str, Any] = host_mjs(expression, mountinfo=mountinfo, controllers=controllers, runc=runc)
    return result


@pytest.mark.parametrize(
    ("sample", "mode", "unified"),
    [("v1", "v1", None), ("v2", "v2", "/sys/fs/cgroup"), ("hybrid", "hybrid", "/sys/fs/cgroup/unified")],
)
def test_the_cgroup_layout_is_read_from_mountinfo(sample: str, mode: str, unified: str | None) -> None:
    mountinfo = (SAMPLES / f"{sample}.mountinfo").read_text()
    assert host_mjs("host.cgroupLayout(mountinfo)", mountinfo=mountinfo) == {"mode": mode, "unified": unified}


@pytest.mark.parametrize(
    ("sample", "controllers"),
    [("v1", []), ("v2", ["cpu", "memory", "pids"]), ("hybrid", [])],
)
def test_podmans_default_runtime_where_crun_starts(sample: str, controllers: list[str]) -> None:
    assert plan(sample, controllers)["runtime"] is None


def test_hybrid_cgroups_with_controllers_in_cgroup2_take_runc() -> None:
    chosen = plan("hybrid", ["hugetlb"])
    assert chosen["runtime"] == "runc"
    assert "hugetlb" in "; ".join(chosen["notes"])


def test_hybrid_cgroups_without_runc_are_refused_with_the_fix() -> None:
    refused = plan("hybrid", ["hugetlb"], runc=False)
    assert "runtime" not in refused
    assert "hugetlb in /sys/fs/cgroup/unified" in refused["problem"]
    assert "apt-get install runc" in refused["fix"]


def test_no_cgroups_at_all_is_refused() -> None:
    assert "no cgroup file system" in plan_of_text("22 1 254:1 / / rw - ext4 /dev/vda1 rw\n")["problem"]


def plan_of_text(mountinfo: str) -> dict[str, Any]:
    result: dict[str, Any] = host_mjs(
        "host.planFor({ layout: host.cgroupLayout(mountinfo), controllers: [], rlimits: true, runc: true })",
        mountinfo=mountinfo,
    )
    return result


@pytest.mark.parametrize(("status", "expected"), [(FULL_ROOT, True), (NO_SYS_RESOURCE, False), ("Name:\tx\n", False)])
def test_cap_sys_resource_is_read_from_status(status: str, expected: bool) -> None:
    assert host_mjs("host.canRaiseRlimits(status)", status=status) is expected


@pytest.mark.parametrize(
    ("soft", "hard", "expected"),
    [
        ("1024", "20000", "nproc=1024:20000"),
        ("unlimited", "unlimited", "nproc=32768:32768"),
        ("40000", "96369", "nproc=32768:32768"),
    ],
)
def test_the_container_gets_the_launchers_own_rlimits_processes_capped_at_pid_max(
    soft: str, hard: str, expected: str
) -> None:
    """The launcher's bash, run with a stand-in `ulimit` and pid_max: podman itself runs with at most pid_max
    processes, so a container asking for more fails to start without CAP_SYS_RESOURCE."""
    bash = host_mjs("host.ulimitArgs()").replace("/proc/sys/kernel/pid_max", "<(echo 32768)")
    stand_in = (
        f'ulimit() {{ case "$1" in -Sn) echo 1024;; -Hn) echo 20000;; -Su) echo {soft};; -Hu) echo {hard};; esac; }}'
    )
    done = subprocess.run(
        ["bash", "-c", f'{stand_in}\nargs=()\n{bash}\nprintf "%s\\n" "${{args[@]}}"'],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["--ulimit", "nofile=1024:20000", "--ulimit", expected]
