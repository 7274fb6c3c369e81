"""The sessions scenario: job B, continued with its agent's own flag after job A ran, must get its own session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from live import run_suite

from boundary.layout import create_repository
from boundary.model import JobRecord
from boundary.sabotage.sessions import WORKSPACE, ClaudeOneWorkspace, CodexOneWorkspace, OpencodeOneWorkspace
from boundary.scenarios import BUILT_IN
from boundary.scenarios.sessions.cli import CLI_CELL
from boundary.scenarios.sessions.scenario import CONTINUE_CELL, Sessions, _ran, continued, session_finding

THEIRS = "BOUNDARY-0000000000000000000a"  # job A's canary
OWN = "BOUNDARY-0000000000000000000b"  # job B's own


def record(*bodies: str) -> JobRecord:
    job = JobRecord("sessions.job-b")
    job.bodies = [body.encode() for body in bodies]
    return job


def test_registered_and_planned_for_every_agent():
    assert BUILT_IN["sessions"] is Sessions
    assert Sessions.agents == frozenset({"opencode", "claude", "codex"})


def test_each_agent_continues_with_its_own_flag():
    opencode = ["launch", "opencode", "run", "go"]
    assert continued("opencode", opencode) == [*opencode, "--continue"]
    assert continued("claude", ["claude", "-p", "go", "--tools", "Bash"])[-1] == "--continue"
    codex = ["launch", "codex", "exec", "--json", "-c", 'a="b"', "go"]
    assert continued("codex", codex) == ["launch", "codex", "exec", "--json", "-c", 'a="b"', "resume", "--last", "go"]
    with pytest.raises(ValueError, match="prompt"):
        continued("codex", ["codex", "exec", "other"])
    with pytest.raises(ValueError, match="no continue flag"):
        continued("aider", ["aider"])


def test_job_a_canary_anywhere_is_leaked_whatever_else_went_wrong():
    found = session_finding(record("{}", f'{{"messages": ["{THEIRS}"]}}'), THEIRS, OWN, ["job exited 1"])
    assert found.verdict == "LEAKED" and THEIRS in found.detail


def test_own_session_continued_and_no_canary_of_a_is_denied():
    assert session_finding(record(f'{{"messages": ["{OWN}"]}}'), THEIRS, OWN, []).verdict == "DENIED"


def test_continue_not_in_effect_proves_nothing():
    """A flag that continues nothing would never give B A's session either: the control says so."""
    found = session_finding(record('{"messages": ["go"]}'), THEIRS, OWN, [])
    assert found.verdict == "INCONCLUSIVE" and "continue is not in effect" in found.detail


def test_a_job_that_sent_its_canary_back_in_its_history_holds_it_whatever_its_shell_printed():
    """opencode's shell tool may answer "(no output)" for `echo CANARY` (it takes the exit code without waiting for
    its output reader): the canary is in the session all the same, in the call's arguments the agent sent back."""
    call = {"tool_calls": [{"arguments": json.dumps({"command": f"echo {THEIRS}"})}]}
    history = record(json.dumps({"messages": [call]}))
    history.results["a-own"] = "(no output)"
    assert _ran(history, "a-own", THEIRS, "job A") == []
    silent = record('{"messages": []}')
    silent.results["a-own"] = "(no output)"
    assert "never sent its canary back" in _ran(silent, "a-own", THEIRS, "job A")[0]
    assert "got no answer" in _ran(record(THEIRS), "a-own", THEIRS, "job A")[0]


def test_no_request_or_a_broken_job_proves_nothing():
    assert session_finding(record(), THEIRS, OWN, []).verdict == "INCONCLUSIVE"
    found = session_finding(record(OWN), THEIRS, OWN, ["job A's shell never gave its canary back"])
    assert found.verdict == "INCONCLUSIVE" and "job A" in found.detail


@pytest.mark.parametrize("kind", [OpencodeOneWorkspace, ClaudeOneWorkspace, CodexOneWorkspace])
def test_sabotage_puts_every_job_in_one_workspace(kind: Any, tmp_path: Path):
    runner = kind()
    runner.setup(tmp_path / "state", create_repository(tmp_path / "project.git", {"a": "a\n"}), "secret")
    a, b = runner.job_paths("job-a"), runner.job_paths("job-b")
    assert a.checkout == b.checkout and a.checkout.name == WORKSPACE
    assert a.data != b.data  # only the workspace (and, for Claude Code and codex, the agent's home) is shared
    if runner.agent.name != "opencode":
        assert runner.agent.config_dir(a) == runner.agent.config_dir(b)


# -- live: the reference runners pass, and one runner per agent that shares sessions fails LEAKED --------------------


def cell(report: dict[str, Any], agent: str, wanted: tuple[str, str] = CONTINUE_CELL) -> dict[str, Any]:
    results = report["scenarios"][f"{agent}/sessions"]["results"]
    return next(r for r in results if (r["target"], r["channel"]) == wanted)


@pytest.mark.live
def test_reference_runners_continue_only_their_own_sessions(pytester: pytest.Pytester) -> None:
    result, report = run_suite(pytester, "--scenario", "sessions", timeout=900)
    assert result.ret == 0, result.stdout.str()[-3000:]
    for agent in ("opencode", "claude", "codex"):
        found = cell(report, agent)
        assert found["verdict"] == "DENIED", found
        assert "continued its own session" in found["detail"]
    cli = cell(report, "opencode", CLI_CELL)  # srt hides the account's database from the shell, and says so
    assert (cli["verdict"], cli["layer"]) == ("DENIED", "OS sandbox"), cli


@pytest.mark.live
def test_a_shell_that_reads_the_account_database_exports_job_a_session(pytester: pytest.Pytester) -> None:
    """The reference opencode runner with a shell sandbox that confines nothing: B's shell runs opencode's own
    CLI on the account's database and prints A's session."""
    options = ("--agent", "opencode", "--sandbox", "passthrough", "--scenario", "sessions")
    result, report = run_suite(pytester, *options, timeout=600)
    assert result.ret == 1
    found = cell(report, "opencode", CLI_CELL)
    assert found["verdict"] == "LEAKED" and "exported job A's session" in found["detail"], found
    result.stdout.fnmatch_lines(["*LEAKED: job_a_canaries via session_cli*", "*RESULT: FAIL*"])


@pytest.mark.live
@pytest.mark.parametrize(
    ("agent", "runner"),
    [("opencode", "OpencodeOneWorkspace"), ("claude", "ClaudeOneWorkspace"), ("codex", "CodexOneWorkspace")],
)
def test_one_workspace_gives_job_b_job_a_session(pytester: pytest.Pytester, agent: str, runner: str) -> None:
    """One workspace path for every job of the repository (and the account's agent home): continuing B picks the
    newest session of that directory, A's."""
    options = ("--agent", agent, "--runner", f"boundary.sabotage.sessions:{runner}", "--scenario", "sessions")
    result, report = run_suite(pytester, *options, timeout=900)
    assert result.ret == 1
    found = cell(report, agent)
    assert found["verdict"] == "LEAKED" and "job A's session" in found["detail"], found
    result.stdout.fnmatch_lines(["*LEAKED: job_a_canaries via continue*", "*RESULT: FAIL*"])
