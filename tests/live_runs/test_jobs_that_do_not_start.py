"""A runner whose jobs cannot start on this host (issue 44): `runner check` fails in seconds and a run stops at each
unit's first job, both in the job's own words, said once, never as every cell INCONCLUSIVE."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from live import run_suite
from paths import ROOT

from boundary.sabotage.cannot_start import CRUN_ERROR

pytestmark = pytest.mark.live

# The opencode example runner, its create-job answer rewritten so the job starts through a launcher that fails as crun
# does on a host with hybrid cgroups: what a container runner's jobs do on such a host.
WRAPPER = f"""#!/bin/bash
answer=$(node {ROOT}/examples/runners/opencode/runner.mjs "$@") || exit $?
[ "$1" = create-job ] || {{ printf '%s\\n' "$answer"; exit 0; }}
printf '%s' "$answer" | {sys.executable} -c '
import json, sys, pathlib
job = json.load(sys.stdin)
launcher = pathlib.Path(job["checkout"] + ".data") / "crun-launch"
launcher.write_text("#!/bin/sh\\necho \\"{CRUN_ERROR}\\" >&2\\nexit 126\\n")
launcher.chmod(0o755)
job["argv"] = [str(launcher), *job["argv"]]
print(json.dumps(job))'
"""


def runner_check(command: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "boundary.cli", "runner", "check", command]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def test_runner_check_starts_a_job_and_names_why_it_cannot(tmp_path: Path) -> None:
    wrapper = tmp_path / "runner.sh"
    wrapper.write_text(WRAPPER)
    began = time.monotonic()
    done = runner_check(f"bash {wrapper}")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ok create-job" in done.stdout  # every verb answered: only the job fails
    assert "the runner's jobs do not start on this host: its job exited 126" in done.stderr
    assert CRUN_ERROR in done.stderr and "PASS" not in done.stdout
    assert time.monotonic() - began < 30


def test_runner_check_passes_a_runner_whose_job_starts() -> None:
    done = runner_check(f"node {ROOT}/examples/runners/opencode/runner.mjs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok job check-start: reached the model, answered shell: 'boundary-check'" in done.stdout


def test_a_run_stops_at_each_units_first_job_and_says_why_once(pytester: pytest.Pytester) -> None:
    options = ("--runner", "boundary.sabotage.cannot_start:CannotStart", "--agent", "opencode")
    began = time.monotonic()
    result, report = run_suite(pytester, *options, "--scenario", "cross_job", "--scenario", "tamper")
    assert result.ret == 1
    assert time.monotonic() - began < 60  # no job waits for a model that never hears from it
    for part in report["scenarios"].values():
        assert part["not_started"]["said"] == CRUN_ERROR and part["results"] == []
    said = result.stdout.str()
    assert said.count("DID NOT RUN (2 units: opencode/cross_job, opencode/tamper): the runner's jobs do not start") == 1
    assert report["verdict"]["failures"][0].endswith(CRUN_ERROR)
    assert "(INCONCLUSIVE)" not in said and "INCONCLUSIVE:" not in said  # one unit that did not run, no cells
    result.assert_outcomes(failed=2, skipped=result.parseoutcomes()["skipped"])
