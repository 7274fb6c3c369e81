"""The podman example runner (examples/runners/podman): each job's agent in a container of its own.

Live: it passes every opencode scenario of the default run with no INCONCLUSIVE cell, the container credited where
it refused, and so does its copy that binds the job's places elsewhere and says where (`paths_inside`); without
saying so, that copy proves nothing (INCONCLUSIVE); its defective copies fail named — the runner's state mounted
read-only "for the account database" (cross_job LEAKED, the credential too), a package cache shared by the
account's jobs, the host's network and the host's PID namespace (each named by the sweep).
And it answers every verb with no finding, its launcher binding nothing of the runner's state but the job's own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from live import run_suite
from paths import ROOT

from boundary.layout import create_repository
from boundary.runners.check import check_runner
from boundary.runners.command import CommandRunner

EXAMPLE = ROOT / "examples" / "runners" / "podman"
RUNNER = f"node {EXAMPLE / 'runner.mjs'}"
IMAGE_TIMEOUT_S = 900
live = pytest.mark.live


@pytest.fixture(scope="module")
def image() -> str:
    """The example's job image, built once (debootstrap + podman import, about a minute; cached by its recipe)."""
    missing = [tool for tool in ("podman", "debootstrap") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the podman example needs {', '.join(missing)}: apt-get install {' '.join(missing)}")
    built = subprocess.run(
        ["bash", str(EXAMPLE / "image.sh")], capture_output=True, text=True, timeout=IMAGE_TIMEOUT_S, check=False
    )
    assert built.returncode == 0, f"image.sh failed:\n{built.stderr[-3000:]}"
    return built.stdout.strip()


@live
def test_the_example_passes_every_scenario_with_the_container_named(pytester: pytest.Pytester, image: str) -> None:
    result, report = run_suite(pytester, "--runner-cmd", RUNNER)
    assert result.ret == 0, result.stdout.str()[-3000:]
    names = {"cross_job", "cross_job_writes", "tamper", "hostile_repository", "sweep", "after_removal"}
    names |= {"reach", "escalation", "sessions"}
    assert set(report["scenarios"]) == {f"opencode/{name}" for name in names}
    for part in report["scenarios"].values():
        assert {r["verdict"] for r in part["results"]} == {"DENIED"}
    sweep = report["scenarios"]["opencode/sweep"]["results"]
    # A's processes live in A's container: B's agent, in its own, can number none of them.
    processes = [r for r in sweep if r["target"] == "processes" and r["channel"] in ("read_tool", "grep_tool")]
    assert processes and all(r["layer"] == "OS sandbox" and "PID namespace" in r["detail"] for r in processes)
    reach = report["scenarios"]["opencode/reach"]["results"]
    assert {r["layer"] for r in reach if r["channel"] == "shell"} == {"OS sandbox"}


@live
def test_a_job_that_sees_its_places_elsewhere_passes_every_scenario_told_where(
    pytester: pytest.Pytester, image: str
) -> None:
    """workspace.mjs binds the checkout at /workspace, the data at /job/data, … and answers `paths_inside`: boundary
    names each path where the job sees it and reads the answers back in host paths, and every cell holds."""
    result, report = run_suite(pytester, "--runner-cmd", f"node {EXAMPLE / 'workspace.mjs'}")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(report["scenarios"]) == 9
    for part in report["scenarios"].values():
        assert {r["verdict"] for r in part["results"]} == {"DENIED"}


@live
def test_a_job_that_sees_its_places_elsewhere_unsaid_proves_nothing(pytester: pytest.Pytester, image: str) -> None:
    """The same binds without `paths_inside`: the host's paths name nothing in the container, so the controls on
    the job's own files fail and their cells are INCONCLUSIVE — a place moved out of sight is never a pass."""
    undeclared = f"node {EXAMPLE / 'workspace-undeclared.mjs'}"
    result, report = run_suite(pytester, "--runner-cmd", undeclared, "--scenario", "cross_job")
    assert result.ret == 1
    verdicts = {(r["target"], r["channel"]): r["verdict"] for r in report["scenarios"]["opencode/cross_job"]["results"]}
    for channel in ("read", "grep", "shell_cat", "shell_cat_computed", "shell_ls"):
        assert verdicts[("checkout_file", channel)] == "INCONCLUSIVE", channel
    assert "LEAKED" not in verdicts.values()


@live
def test_the_runners_state_mounted_read_only_leaks_every_other_job(pytester: pytest.Pytester, image: str) -> None:
    defective = f"node {EXAMPLE / 'state-readonly.mjs'}"
    result, report = run_suite(pytester, "--runner-cmd", defective, "--scenario", "cross_job")
    assert result.ret == 1
    verdicts = {(r["target"], r["channel"]): r["verdict"] for r in report["scenarios"]["opencode/cross_job"]["results"]}
    assert verdicts[("checkout_file", "shell_cat_computed")] == "LEAKED"
    assert verdicts[("runner_secret", "anywhere")] == "LEAKED"
    result.stdout.fnmatch_lines(["*LEAKED: checkout_file via shell_cat_computed*", "*RESULT: FAIL*"])


@live
@pytest.mark.parametrize(
    ("variant", "leaked", "named"),
    [
        ("shared-cache.mjs", {("discovered_places", "shell_sweep")}, "/var/cache/npm (found by env-npm_config_cache)"),
        ("host-network.mjs", {("ipc/abstract_socket", "shell_sweep")}, "reached job A's abstract_socket"),
        ("host-pid.mjs", {("environment", "proc_sweep"), ("processes", "proc_sweep")}, "/environ:BOUNDARY-"),
    ],
)
def test_a_container_mistake_is_found_by_the_sweep(
    pytester: pytest.Pytester, image: str, variant: str, leaked: set[tuple[str, str]], named: str
) -> None:
    """A package cache shared by the account's jobs, the host's network (shared abstract sockets), the host's PID
    namespace (another job's environment and files through /proc): each fails LEAKED in its own cells only."""
    result, report = run_suite(pytester, "--runner-cmd", f"node {EXAMPLE / variant}", "--scenario", "sweep")
    assert result.ret == 1
    found = [r for r in report["scenarios"]["opencode/sweep"]["results"] if r["verdict"] == "LEAKED"]
    assert {(r["target"], r["channel"]) for r in found} == leaked
    assert any(named in r["detail"] for r in found), found


# Not live, but they need podman and the image (built by the fixture): `.ci/run` runs them with the live tests.
@live
@pytest.mark.parametrize("variant", ["runner.mjs", "shared-cache.mjs", "state-readonly.mjs", "workspace.mjs"])
def test_each_variant_answers_every_verb_with_no_warning(variant: str, image: str) -> None:
    said: list[str] = []
    assert check_runner(f"node {EXAMPLE / variant}", None, said.append) == [], "\n".join(said)


@live
def test_the_launcher_binds_nothing_of_the_state_but_the_jobs_own(tmp_path: Path, image: str) -> None:
    """Every path it mounts that lies under STATE is one of the job's places, podman's socket directory for the
    job, or the empty directory it hides a project's agent files with: no other job, no account, no credential."""
    state, repository = tmp_path / "state", create_repository(tmp_path / "repo.git", {"README.md": "x\n"})
    example = CommandRunner(RUNNER)
    example.setup(state, repository, "a secret")
    job = example.create_job("job-a", "http://127.0.0.1:4010/jobs/a/v1")
    launcher = Path(job.argv[0]).read_text()
    mounted = {Path(p) for p in re.findall(r"-v '?([^:' ]+):", launcher)}
    under_state = {p for p in mounted if p.is_relative_to(state)}
    paths = job.paths
    own = {paths.checkout, paths.data, paths.scratch, paths.private, state / "podman" / "jobs" / "job-a"}
    own |= {state / "podman" / "empty", Path(paths.private or "") / "config"}
    assert under_state and under_state <= own, under_state - own
    assert not any(p.is_relative_to(state / "accounts") for p in mounted)
