"""The hostile-repository scenario's beacons, judged without an agent: "never ran" needs a beacon that did.

A stand-in session plays job B: its shell runs each command it is given (as a job's shell would, unconfined
here), and nothing the repository carries is loaded. A planted beacon that never ran is DENIED only when the
control beacon, which B's own shell runs in the same job, is seen to have run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from boundary import canary
from boundary.agents.opencode import OpenCode
from boundary.beacon import Beacon
from boundary.layout import JobPaths
from boundary.model import Script
from boundary.model.record import JobRecord
from boundary.probes import Target
from boundary.runners.contract import Job
from boundary.scenarios.hostile_repository import NOT_RUN, HostileRepository, _beacon_finding
from boundary.verdict import Verdict


class Shell:
    """Job B: `bash` calls run in its checkout when `runs` is set; every other call answers "ok"."""

    def __init__(self, workdir: Path, runs: bool) -> None:
        self.workdir, self.runs = workdir, runs
        (workdir / "transcript").write_text("")

    def run_to_the_end(self, job: Job, script: Script, resumed: bool = False) -> tuple[Any, JobRecord, str]:
        record = JobRecord(job.name)
        for step in script.steps:
            for call in step:
                answer = "ok"
                if call.tool == "bash" and self.runs:
                    done = subprocess.run(
                        ["bash", "-c", call.args["command"]], cwd=job.checkout, capture_output=True, text=True
                    )
                    answer = done.stdout + done.stderr
                record.results[call.id] = answer
        return SimpleNamespace(transcript=self.workdir / "transcript"), record, ""

    def transcripts_of(self, name: str) -> list[Path]:
        return [self.workdir / "transcript"]

    def problems_of(self, name: str, resumed: bool = False) -> list[str]:
        return []


@pytest.fixture
def job(tmp_path: Path) -> Job:
    checkout = tmp_path / "state" / "checkouts" / "job-b"
    checkout.mkdir(parents=True)
    paths = JobPaths("job-b", checkout, tmp_path / "state" / "checkouts" / "job-b.data")
    return Job("job-b", paths, ["/bin/true"], {"HOME": str(tmp_path / "state" / "home")})


@pytest.fixture
def saved(tmp_path: Path) -> Target:
    path = tmp_path / "state" / "checkouts" / "job-a.data" / "saved"
    path.parent.mkdir(parents=True)
    target = Target("saved_output", path, canary.new_canary(), "saved")
    path.write_text(target.content)
    return target


def runner() -> SimpleNamespace:
    agent = OpenCode()
    sandbox = SimpleNamespace(name="srt", startup_failures=())
    return SimpleNamespace(name="fake", agent=agent, sandbox=sandbox, denials=dict(agent.denials))


def planted(tmp_path: Path, saved: Target) -> dict[str, Beacon]:
    witness = tmp_path / "witness"
    witness.mkdir(exist_ok=True)
    return {name: Beacon(f"{name}-{canary.new_canary()}", witness, (saved.path,)) for name in OpenCode.hostile_beacons}


def loaded(results: list[Any]) -> dict[str, Any]:
    return {r.target: r for r in results if r.channel == "loaded"}


def test_never_ran_is_denied_only_beside_a_control_beacon_that_ran(tmp_path: Path, job: Job, saved: Target) -> None:
    """B's shell runs the control beacon: it is found, so the planted beacons that left nothing never ran."""
    beacons = planted(tmp_path, saved)
    results = HostileRepository()._run_job_b(runner(), Shell(tmp_path, runs=True), job, saved, beacons)  # type: ignore[arg-type]
    cells = loaded(results)
    assert set(cells) == set(beacons)
    assert {(r.verdict, r.layer) for r in cells.values()} == {("DENIED", NOT_RUN)}, [r.detail for r in cells.values()]
    assert all("control beacon" in r.detail for r in cells.values())


def test_never_ran_without_a_control_that_ran_is_inconclusive(tmp_path: Path, job: Job, saved: Target) -> None:
    """The job's shell ran nothing (or the harness cannot see a beacon that runs): "never ran" proves nothing."""
    beacons = planted(tmp_path, saved)
    results = HostileRepository()._run_job_b(runner(), Shell(tmp_path, runs=False), job, saved, beacons)  # type: ignore[arg-type]
    cells = loaded(results)
    assert {r.verdict for r in cells.values()} == {"INCONCLUSIVE"}
    assert all("control beacon" in r.detail for r in cells.values())


def test_a_planted_beacon_that_ran_inside_or_outside_is_judged_whatever_the_control(
    tmp_path: Path, job: Job, saved: Target
) -> None:
    beacons = planted(tmp_path, saved)
    plugin, tool = beacons["plugin_dir"], beacons["custom_tool"]
    plugin.witness.write_text("pid 1")
    (job.checkout / tool.report_name).write_text("sandboxed\ndenied EACCES\n")
    control = ["the control beacon left no report"]
    assert _beacon_finding(plugin, job, [], control).verdict is Verdict.EXECUTED
    finding = _beacon_finding(tool, job, [], control)
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "OS sandbox")


def test_a_beacon_report_holding_job_as_canary_is_a_leak_wherever_it_landed(
    tmp_path: Path, job: Job, saved: Target
) -> None:
    """A beacon ran inside the sandbox but read A's output: its report (found in B's data, not its checkout,
    where the output scan looks) is LEAKED."""
    beacon = planted(tmp_path, saved)["mcp_server"]
    job.data_dir.mkdir(parents=True)
    (job.data_dir / beacon.report_name).write_text(f"sandboxed\n{saved.content}\n")
    assert _beacon_finding(beacon, job, [], [], secrets=[saved.content]).verdict is Verdict.LEAKED
