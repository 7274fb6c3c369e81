"""Beacons: planted code that reports where it ran, run for real with /bin/sh and (if present) node."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary.beacon import REPORT_PREFIX, Beacon, witness_directory
from boundary.toolchain import node


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "job-a" / "secret.txt"
    path.parent.mkdir()
    path.write_text("job A's secret\n")
    return path


def beacon(tmp_path: Path, target: Path, witness_dir: Path) -> Beacon:
    checkout = tmp_path / "checkout"
    checkout.mkdir(exist_ok=True)
    return Beacon("b1", witness_dir, (target,), report_dir=checkout)


def run_shell(b: Beacon, cwd: Path) -> None:
    script = cwd / "hook"
    script.write_text(b.shell())
    subprocess.run(["/bin/sh", str(script)], cwd=cwd, check=True, timeout=10)


def run_node(b: Beacon, cwd: Path) -> None:
    module = cwd / "plugin.mjs"
    module.write_text(b.javascript())
    subprocess.run([str(node.wheel_node()), str(module)], cwd=cwd, check=True, timeout=30, capture_output=True)


RUNNERS = [pytest.param(run_shell, id="shell"), pytest.param(run_node, id="javascript")]


@pytest.mark.parametrize("run", RUNNERS)
def test_unconfined_beacon_leaves_witness_and_report(
    tmp_path: Path, target: Path, run: Callable[[Beacon, Path], None]
) -> None:
    """With its witness directory writable it writes the witness, and a report "unconfined" with what it read."""
    witness_dir = tmp_path / "witness"
    witness_dir.mkdir()
    b = beacon(tmp_path, target, witness_dir)
    run(b, tmp_path)
    assert b.witness.exists() and b.ran_unconfined()
    report = b.report.read_text()
    assert report.startswith("unconfined") and "job A's secret" in report
    assert b.report.name == f"{REPORT_PREFIX}b1.txt"
    assert b.ran_inside(b.report.parent)
    assert b.where().startswith("ran unconfined:")


@pytest.mark.parametrize("run", RUNNERS)
def test_confined_beacon_reports_sandboxed_without_witness(
    tmp_path: Path, target: Path, run: Callable[[Beacon, Path], None]
) -> None:
    """Without a reachable witness directory it leaves no witness, and a report starting "sandboxed"."""
    b = beacon(tmp_path, target, tmp_path / "no-such-dir")
    run(b, tmp_path)
    assert not b.witness.exists() and not b.ran_unconfined()
    report = b.report.read_text()
    assert report.startswith("sandboxed") and "job A's secret" in report
    assert b.ran_inside(b.report.parent)
    assert b.where() == "left no witness outside the sandbox"


@pytest.mark.parametrize("run", RUNNERS)
def test_unreadable_target_is_reported_not_fatal(tmp_path: Path, run: Callable[[Beacon, Path], None]) -> None:
    """A target it cannot read does not stop the beacon: the report is still written."""
    witness_dir = tmp_path / "witness"
    witness_dir.mkdir()
    b = beacon(tmp_path, tmp_path / "missing.txt", witness_dir)
    run(b, tmp_path)
    assert b.report.read_text().startswith("unconfined")


def test_report_defaults_to_the_directory_it_runs_in(tmp_path: Path, target: Path) -> None:
    """With no report_dir the report lands in the working directory, where ran_inside finds it."""
    b = Beacon("b2", tmp_path / "no-such-dir", (target,))
    work = tmp_path / "work"
    work.mkdir()
    run_shell(b, work)
    assert (work / b.report.name).read_text().startswith("sandboxed")
    assert b.ran_inside(work) and not b.ran_unconfined()


def test_beacon_that_never_ran(tmp_path: Path, target: Path) -> None:
    """Neither a witness nor a report: it neither ran unconfined nor inside."""
    b = beacon(tmp_path, target, tmp_path)
    assert not b.ran_unconfined() and not b.ran_inside(tmp_path / "checkout")


def test_a_report_is_never_looked_for_in_the_harness_working_directory(
    tmp_path: Path, target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A beacon with no report directory writes where it runs; the harness looks where the job runs, never in
    its own working directory (a file of that name there says nothing of the job)."""
    b = Beacon("b3", tmp_path / "no-such-dir", (target,))
    harness = tmp_path / "harness"
    harness.mkdir()
    monkeypatch.chdir(harness)
    (harness / b.report_name).write_text("sandboxed\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    assert not b.ran_inside(checkout)
    assert b.find_report([checkout]) is None


def test_a_report_written_below_the_checkout_is_found(tmp_path: Path, target: Path) -> None:
    """An MCP server or a hook may run in a subdirectory of the checkout: its report is found there too."""
    b = Beacon("b4", tmp_path / "no-such-dir", (target,))
    checkout = tmp_path / "checkout"
    work = checkout / ".opencode" / "tool"
    work.mkdir(parents=True)
    run_shell(b, work)
    assert b.ran_inside(checkout)
    assert b.find_report([checkout]) == work / b.report_name


def test_a_module_beacon_reports_beside_its_file_when_its_working_directory_is_elsewhere(
    tmp_path: Path, target: Path
) -> None:
    """A plugin imported by an agent that runs somewhere its sandbox cannot write still leaves its report in
    the checkout, beside the module: a beacon that ran is never taken for one that did not."""
    b = Beacon("b5", tmp_path / "no-such-dir", (target,))
    checkout = tmp_path / "checkout"
    module = checkout / ".opencode" / "plugin" / "beacon.mjs"
    module.parent.mkdir(parents=True)
    module.write_text(b.javascript())
    subprocess.run([str(node.wheel_node()), str(module)], cwd="/proc", check=True, timeout=30, capture_output=True)
    assert b.find_report([checkout]) == module.parent / b.report_name


def test_a_script_beacon_reports_beside_its_file_when_its_working_directory_is_elsewhere(
    tmp_path: Path, target: Path
) -> None:
    b = Beacon("b6", tmp_path / "no-such-dir", (target,))
    hook = tmp_path / "checkout" / ".git" / "hooks" / "post-checkout"
    hook.parent.mkdir(parents=True)
    hook.write_text(b.shell())
    subprocess.run(["/bin/sh", str(hook)], cwd="/proc", check=True, timeout=10)
    assert b.find_report([tmp_path / "checkout"]) == hook.parent / b.report_name


def test_a_beacon_of_a_job_run_as_another_user_with_no_sandbox_leaves_its_witness() -> None:
    """Issue 28: the witness directory was 0755 root, so an unconfined beacon running as a job's own user (the
    unprivileged-user strategy with no sandbox) could not write there and was reported as confined."""
    workdir = Path(tempfile.mkdtemp(prefix="bnd-witness-"))  # tmp_path's parents are root's alone: not traversable
    try:
        workdir.chmod(0o711)  # as the run's work directory
        beacon = Beacon("as-nobody", witness_directory(workdir), ())
        script = workdir / "beacon.sh"
        script.write_text(beacon.shell())
        script.chmod(0o755)
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "sh", str(script)]
        subprocess.run(as_nobody, cwd="/", check=True, timeout=30)
        assert beacon.ran_unconfined(), "a beacon no sandbox confined, run as another user, left no witness"
        listing = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "ls", str(beacon.witness_dir)]
        assert subprocess.run(listing, capture_output=True, timeout=30).returncode != 0  # no job lists the others'
    finally:
        shutil.rmtree(workdir)
