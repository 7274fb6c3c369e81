"""The Action's own shell steps, run as GitHub runs a composite step (`bash -eo pipefail`), with a `boundary` that
records what it was asked: the comparison only with a base report, one summary line without one, the shards
merged, a refused comment a warning. (`act` is not available here; actionlint and the schema check the rest.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.ci.test_ci_files import ACTION, _load

FAKE_BOUNDARY = """#!/bin/bash
printf '%s\\n' "$*" >> "$CALLS"
case "$1 $2" in
  "ci base-report")
    out=${@: -1}
    if [ -n "$BASE_THERE" ]; then echo '{}' > "$out"; echo "base report: runner-sandbox.json in $out"
    else echo "no base report: no unexpired artifact boundary-reports from branch main"; fi ;;
  "ci comment") exit "${COMMENT_RC:-0}" ;;
esac
"""


def _step(name: str) -> dict[str, Any]:
    steps = _load(ACTION)["runs"]["steps"]
    return next(step for step in steps if step.get("name") == name)


@pytest.fixture
def github(tmp_path: Path) -> dict[str, str]:
    """A workflow run's environment: its files, and `boundary` and `sudo` that only record."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "boundary").write_text(FAKE_BOUNDARY)
    (bin_dir / "sudo").write_text('#!/bin/bash\nexec "$@"\n')
    for tool in ("boundary", "sudo"):
        (bin_dir / tool).chmod(0o755)
    (tmp_path / "work").mkdir()
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "BOUNDARY": str(bin_dir / "boundary"),
        "CALLS": str(tmp_path / "calls"),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


def _run(name: str, env: dict[str, str], **inputs: str) -> subprocess.CompletedProcess[str]:
    """The step's script, its inputs given as the environment variables its `env:` maps them to."""
    step = _step(name)
    assert "${{" not in step["run"], f"step {name!r}: inputs reach the script through env:, never pasted into it"
    workdir = Path(env["RUNNER_TEMP"]) / "work"
    argv = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]]
    return subprocess.run(argv, env={**env, **inputs}, cwd=workdir, capture_output=True, text=True, timeout=30)


def _calls(env: dict[str, str]) -> list[str]:
    path = Path(env["CALLS"])
    return path.read_text().splitlines() if path.exists() else []


def test_without_a_base_report_one_line_goes_to_the_summary_and_the_suite_compares_nothing(
    github: dict[str, str],
) -> None:
    base = _run("Base report", github, BRANCH="main", BASE_ARTIFACT="boundary-reports")
    assert base.returncode == 0, base.stderr
    summary = Path(github["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary == "no base report: no unexpired artifact boundary-reports from branch main\n"
    suite = _run("Live suite", github, HOST="namespace", RUNNER_COMMAND="node runner.mjs", FAIL_ON="weaker")
    assert suite.returncode == 0, suite.stderr
    assert _calls(github)[-1] == "run --host namespace --runner-cmd node runner.mjs"


def test_with_a_base_report_the_suite_is_compared_and_fails_on_weaker_when_asked(github: dict[str, str]) -> None:
    _run("Base report", github, BRANCH="main", BASE_ARTIFACT="boundary-reports", BASE_THERE="1")
    assert not Path(github["GITHUB_STEP_SUMMARY"]).exists()  # the comparison says it, in the report
    base = f"{github['RUNNER_TEMP']}/boundary-base.json"
    _run("Live suite", github, HOST="namespace", AGENTS="opencode", FAIL_ON="weaker", OPTIONS="--scenario reach")
    assert (
        _calls(github)[-1]
        == f"run --host namespace --agent opencode --against {base} --fail-on weaker --scenario reach"
    )
    _run("Live suite", github, HOST="container")
    assert _calls(github)[-1] == f"run --host container --against {base}"


def test_the_merge_step_joins_every_shard_the_glob_finds_and_fails_on_none(github: dict[str, str]) -> None:
    work = Path(github["RUNNER_TEMP"]) / "work"
    for shard in ("boundary-shard-opencode-namespace", "boundary-shard-codex-namespace"):
        (work / "shards" / shard).mkdir(parents=True)
        (work / "shards" / shard / "runner-sandbox.json").write_text("{}")
    merged = _run("Merge the shards", github, MERGE="shards/*/runner-sandbox.json", FAIL_ON="")
    assert merged.returncode == 0, merged.stderr
    call = _calls(github)[-1]
    assert call.startswith("report --merge shards/boundary-shard-codex-namespace/runner-sandbox.json ")
    assert "shards/boundary-shard-opencode-namespace/runner-sandbox.json --json reports/runner-sandbox.json" in call
    assert "--against" not in call
    none = _run("Merge the shards", github, MERGE="elsewhere/*.json", FAIL_ON="")
    assert none.returncode == 1 and "no shard report matches elsewhere/*.json" in none.stderr


def test_a_refused_comment_is_a_warning_and_no_report_is_no_comment(github: dict[str, str]) -> None:
    link = {"PR": "7", "LINK": "https://github.com/acme/runners/actions/runs/1"}
    nothing = _run("Comment on the pull request", github, **link)
    assert nothing.returncode == 0 and "no comment" in nothing.stdout and _calls(github) == []
    (Path(github["RUNNER_TEMP"]) / "work" / "reports").mkdir()
    (Path(github["RUNNER_TEMP"]) / "work" / "reports" / "runner-sandbox.json").write_text("{}")
    refused = _run("Comment on the pull request", github, COMMENT_RC="1", **link)
    assert refused.returncode == 0 and "::warning::boundary could not comment" in refused.stdout
    assert _calls(github) == [f"ci comment --report reports/runner-sandbox.json --pr 7 --link {link['LINK']}"]


def test_each_job_of_a_matrix_tells_the_suite_which_shard_it_is(github: dict[str, str]) -> None:
    """The second of three matrix jobs runs as `--shard 2/3` (GitHub counts jobs from 0), so a merge can name a
    shard that never reported; the `shard` input overrides it, and outside any matrix nothing is added."""
    _run("Live suite", github, HOST="namespace", JOB_INDEX="1", JOB_TOTAL="3")
    assert _calls(github)[-1] == "run --host namespace --shard 2/3"
    _run("Live suite", github, HOST="namespace", JOB_INDEX="1", JOB_TOTAL="3", SHARD="4/5")
    assert _calls(github)[-1] == "run --host namespace --shard 4/5"
    _run("Live suite", github, HOST="namespace", JOB_INDEX="", JOB_TOTAL="")
    assert _calls(github)[-1] == "run --host namespace"
