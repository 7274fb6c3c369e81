"""The gVisor example runner (examples/runners/gvisor): each job's agent in a gVisor sandbox of its own.

Live: it passes every opencode scenario of the default run with no INCONCLUSIVE cell, watched by packets (runsc's
ptrace platform cannot run under strace), the sandbox credited where it refused; its defective copies fail named:
the account's home shared by every job's sandbox (the sweep), the job namespace's network (reach). Its job spec
binds nothing of the runner's state but the job's own, and no job's start leaves anything in the shared root.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from live import run_suite
from paths import ROOT

from boundary.layout import create_repository
from boundary.runners.check import check_runner
from boundary.runners.command import CommandRunner

EXAMPLES = ROOT / "examples" / "runners"
EXAMPLE = EXAMPLES / "gvisor"
RUNNER = f"node {EXAMPLE / 'runner.mjs'}"
IMAGE_TIMEOUT_S = 900
live = pytest.mark.live


@pytest.fixture(scope="module")
def rootfs() -> Path:
    """The example's root file system, built once by the podman example's image.sh (debootstrap; cached)."""
    missing = [tool for tool in ("runsc", "debootstrap") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the gVisor example needs {', '.join(missing)}: apt-get install {' '.join(missing)}")
    image = EXAMPLES / "podman" / "image.sh"
    built = subprocess.run(["bash", str(image)], capture_output=True, text=True, timeout=IMAGE_TIMEOUT_S, check=False)
    assert built.returncode == 0, f"image.sh failed:\n{built.stderr[-3000:]}"
    found = subprocess.run(["bash", str(image), "--rootfs"], capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


def changed_since_built(rootfs: Path) -> list[Path]:
    """What in the shared root file system is newer than its build: a job's start must change nothing there."""
    built = rootfs.with_name(rootfs.name + ".complete").stat().st_mtime
    return [p for p in rootfs.rglob("*") if not p.is_symlink() and p.lstat().st_mtime > built]


@live
def test_the_example_passes_every_scenario_watched_by_packets(pytester: pytest.Pytester, rootfs: Path) -> None:
    result, report = run_suite(pytester, "--runner-cmd", RUNNER)
    assert result.ret == 0, result.stdout.str()[-3000:]
    names = {"cross_job", "cross_job_writes", "tamper", "hostile_repository", "sweep", "after_removal"}
    names |= {"reach", "escalation", "sessions"}
    assert set(report["scenarios"]) == {f"opencode/{name}" for name in names}
    for part in report["scenarios"].values():
        assert {r["verdict"] for r in part["results"]} == {"DENIED"}
        assert {job["network"]["observed_by"] for job in part["jobs"]} == {"packets"}
    sweep = report["scenarios"]["opencode/sweep"]["results"]
    # A's agent runs in A's Sentry: B's agent, in its own, sees only its own tasks.
    processes = [r for r in sweep if r["target"] == "processes" and r["channel"] in ("read_tool", "grep_tool")]
    assert processes and all(r["layer"] == "OS sandbox" and "gVisor sandbox" in r["detail"] for r in processes)
    reach = report["scenarios"]["opencode/reach"]["results"]
    assert {r["layer"] for r in reach if r["channel"] == "shell"} == {"OS sandbox"}
    assert changed_since_built(rootfs) == []


@live
def test_the_accounts_home_shared_by_every_sandbox_is_found_by_the_sweep(
    pytester: pytest.Pytester, rootfs: Path
) -> None:
    result, report = run_suite(pytester, "--runner-cmd", f"node {EXAMPLE / 'shared-home.mjs'}", "--scenario", "sweep")
    assert result.ret == 1
    found = [r for r in report["scenarios"]["opencode/sweep"]["results"] if r["verdict"] == "LEAKED"]
    assert ("home", "shell_sweep") in {(r["target"], r["channel"]) for r in found}, found
    assert any("accounts/account/home" in r["detail"] for r in found), found


@live
def test_the_hosts_network_lets_the_job_reach_the_runners_services(pytester: pytest.Pytester, rootfs: Path) -> None:
    """gVisor's own kernel, but the job namespace's loopback: the runner API and metadata canaries answer."""
    defective = f"node {EXAMPLE / 'host-network.mjs'}"
    result, report = run_suite(pytester, "--runner-cmd", defective, "--scenario", "reach")
    assert result.ret == 1
    found = [r for r in report["scenarios"]["opencode/reach"]["results"] if r["verdict"] == "LEAKED"]
    assert {("runner_api_tcp", "shell"), ("metadata", "shell")} <= {(r["target"], r["channel"]) for r in found}, found


@live
@pytest.mark.parametrize(("variant", "warned"), [("runner.mjs", ""), ("shared-home.mjs", "share their HOME")])
def test_each_variant_answers_every_verb_and_the_shared_home_is_warned_of(
    variant: str, warned: str, rootfs: Path
) -> None:
    """The example answers with no warning; its defective copy is named by the verbs alone, before any agent."""
    said: list[str] = []
    warnings = check_runner(f"node {EXAMPLE / variant}", None, said.append)
    assert [w for w in warnings if not warned or warned not in w] == [], "\n".join(said)
    assert bool(warnings) == bool(warned), "\n".join(said)


@live
def test_the_job_spec_binds_nothing_of_the_state_but_the_jobs_own(tmp_path: Path, rootfs: Path) -> None:
    state, repository = tmp_path / "state", create_repository(tmp_path / "repo.git", {"README.md": "x\n"})
    example = CommandRunner(RUNNER)
    assert example.description.network_watch == "packets"
    example.setup(state, repository, "a secret")
    job = example.create_job("job-a", "http://127.0.0.1:4010/jobs/a/v1")
    spec = json.loads(Path(job.argv[2]).read_text())
    mounts = spec["mounts"]
    mounted = {Path(source) for source, _ in mounts["readWrite"] + mounts["readOnly"]}
    under_state = {p for p in mounted if p.is_relative_to(state)}
    paths = job.paths
    own = {paths.checkout, paths.data, paths.scratch, paths.private, Path(paths.private or "") / "config"}
    own |= {state / "gvisor" / "jobs" / "job-a" / "model", state / "gvisor" / "bin"}
    assert under_state and under_state <= own, under_state - own
    assert not any(p.is_relative_to(state / "accounts") for p in mounted)
