"""The Claude Code example runner in bash (examples/runners/claude), written from the protocol's docs alone.

Live: it passes every Claude Code scenario of the default run with every probe DENIED, and its defective copy
(permissions skipped, as CI runners often do) fails LEAKED. Unit: it answers every verb with no warning, its
settings are the reference runner's for the same layout, and its `all_but` is the documented one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from live import run_suite
from paths import ROOT

from boundary.layout import JobPaths, RunnerLayout, create_repository
from boundary.runners.check import check_runner
from boundary.runners.claude import ClaudeRunner
from boundary.runners.command import CommandRunner

EXAMPLE = ROOT / "examples" / "runners" / "claude"
RUNNER = f"bash {EXAMPLE / 'runner.sh'}"
live = pytest.mark.live


@live
def test_the_example_passes_every_scenario_with_every_probe_denied(pytester: pytest.Pytester) -> None:
    result, report = run_suite(pytester, "--runner-cmd", RUNNER)
    assert result.ret == 0, result.stdout.str()[-3000:]
    names = {"cross_job", "cross_job_writes", "tamper", "hostile_repository", "sweep", "after_removal"}
    names |= {"reach", "escalation", "sessions"}
    assert set(report["scenarios"]) == {f"claude/{name}" for name in names}
    for part in report["scenarios"].values():
        assert {r["verdict"] for r in part["results"]} == {"DENIED"}
    cross_job = report["scenarios"]["claude/cross_job"]
    assert cross_job["not_planted"] == {}  # the account's directory holds a planted file, denied like the rest
    assert {r["layer"] for r in cross_job["results"] if r["target"] == "account_db"} >= {"agent permission"}


@live
def test_without_grep_and_glob_their_channels_leave_the_plan_and_the_rest_holds(pytester: pytest.Pytester) -> None:
    """Issue 28, item 10: the example started with Bash, Edit, Read and Write only (as Claude Code's defaults have
    no Grep or Glob), and declaring so. Every grep and glob cell was INCONCLUSIVE ("tool 'Grep' is not offered");
    now they leave the plan, said as not offered, and every other cell holds."""
    fewer = pytester.path / "runner.sh"
    fewer.write_text(
        (EXAMPLE / "runner.sh")
        .read_text()
        .replace("TOOLS=Bash,Edit,Glob,Grep,Read,Write", "TOOLS=Bash,Edit,Read,Write")
    )
    scenarios = ("--scenario", "cross_job", "--scenario", "sweep")
    result, report = run_suite(pytester, "--runner-cmd", f"bash {fewer}", *scenarios)
    assert result.ret == 0, result.stdout.str()[-3000:]
    for part in report["scenarios"].values():
        assert part["not_offered"] == ["glob", "grep"]
        assert {r["verdict"] for r in part["results"]} == {"DENIED"}
        assert not [r for r in part["results"] if "grep" in r["channel"] or "glob" in r["channel"]]
    result.stdout.fnmatch_lines(["*not offered: channels through a glob, grep tool*"])


@live
def test_skipped_permissions_leak_every_other_jobs_file_through_the_file_tools(pytester: pytest.Pytester) -> None:
    defective = f"bash {EXAMPLE / 'skip-permissions.sh'}"
    result, report = run_suite(pytester, "--runner-cmd", defective, "--scenario", "cross_job")
    assert result.ret == 1
    results = report["scenarios"]["claude/cross_job"]["results"]
    read = {r["target"]: r["verdict"] for r in results if r["channel"] == "read"}
    assert set(read.values()) == {"LEAKED"} and "account_db" in read
    assert report["scenarios"]["claude/cross_job"]["layers"]["agent permission"] == 0
    result.stdout.fnmatch_lines(["*LEAKED: checkout_file via read: *", "*RESULT: FAIL*"])


@live
def test_a_runner_that_keeps_no_account_data_gets_no_invented_target(pytester: pytest.Pytester) -> None:
    """Its setup names neither account_db nor account_dir: nothing is planted at the root of STATE, the account's
    cells leave the plan, and the report says why (no INCONCLUSIVE, no pass claimed for them)."""
    wrapper = pytester.path / "no-account.sh"
    drop = 'sed \'s/"account_dir":"[^"]*",//\''
    wrapper.write_text(
        f'if [ "$1" = setup ]; then bash {EXAMPLE / "runner.sh"} "$@" | {drop}\n'
        f'else exec bash {EXAMPLE / "runner.sh"} "$@"; fi\n'
    )
    result, report = run_suite(pytester, "--runner-cmd", f"bash {wrapper}", "--scenario", "cross_job")
    assert result.ret == 0, result.stdout.str()[-3000:]
    part = report["scenarios"]["claude/cross_job"]
    assert "neither account_db nor account_dir" in part["not_planted"]["account_db"]
    assert not [r for r in part["results"] if r["target"] == "account_db"]
    assert not [cell for cell in part["planned"] if cell[0] == "account_db"]
    result.stdout.fnmatch_lines(["*not planted: account_db: the runner keeps no account data*", "*RESULT: PASS*"])


@live  # it starts `claude --version` (the pinned tools)
@pytest.mark.parametrize("variant", ["runner.sh", "skip-permissions.sh"])
def test_each_variant_answers_every_verb_with_no_warning(variant: str) -> None:
    said: list[str] = []
    assert check_runner(f"bash {EXAMPLE / variant}", None, said.append) == [], "\n".join(said)
    assert any(line.startswith("ok setup:") and "account directory" in line for line in said)


@live
def test_its_settings_are_the_reference_runners_for_the_same_layout(tmp_path: Path) -> None:
    """The example is the reference runner in bash: a job's settings (sandbox, deny rules, mode) are the same."""
    state, repository = tmp_path / "state", create_repository(tmp_path / "repo.git", {"README.md": "x\n"})
    example = CommandRunner(RUNNER)
    example.setup(state, repository, "a secret")
    job = example.create_job("job-b", "http://127.0.0.1:1/v1")
    reference = ClaudeRunner()
    reference.layout = RunnerLayout(state)  # the same STATE, so the same paths
    runner_dir = state / "runner" / "job-b"
    paths = JobPaths("job-b", job.checkout, job.data_dir, runner_dir, state / "tmp" / "job-b")
    assert json.loads((runner_dir / "settings.json").read_text()) == reference.settings(paths)
    assert job.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1" and job.env["CLAUDE_CONFIG_DIR"] == str(
        job.data_dir / "claude"
    )


def test_its_all_but_is_the_documented_one() -> None:
    doc = (ROOT / "docs" / "runner-protocol.md").read_text()
    documented = doc.split('## Deny rules for "every job but this one"')[1].split("```bash\n")[1].split("```")[0]
    script = (EXAMPLE / "runner.sh").read_text()
    ours = "all_but() {" + script.split("all_but() {")[1].split("\n}\n")[0] + "\n}\n"
    for name in ("job-b", "job-a.data-a", "Check_A"):
        printed = [
            subprocess.run(["bash", "-c", f"{function}\nall_but /d {name}"], capture_output=True, text=True).stdout
            for function in (documented, ours)
        ]
        assert printed[0] == printed[1] and printed[0], name
