"""Live: the escalation scenario passes the reference runners and fails runners that let an escalation through."""

from __future__ import annotations

from typing import Any

import pytest
from live import run_suite

SABOTAGE = "boundary.sabotage.escalation"

pytestmark = pytest.mark.live


def run_escalation(pytester: pytest.Pytester, agent: str, *options: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    """The escalation scenario alone, for one agent (`options`: a sabotaged runner)."""
    return run_suite(pytester, "--agent", agent, *options, "--scenario", "escalation", timeout=900)


def verdicts(report: dict[str, Any], agent: str) -> dict[tuple[str, str], str]:
    part = report["scenarios"][f"{agent}/escalation"]
    return {(r["target"], r["channel"]): r["verdict"] for r in part["results"]}


@pytest.mark.parametrize("agent", ["opencode", "claude", "codex"])
def test_reference_runner_denies_every_escalation(pytester: pytest.Pytester, agent: str) -> None:
    result, report = run_escalation(pytester, agent)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert set(verdicts(report, agent).values()) == {"DENIED"}


def test_claude_allowing_unsandboxed_commands_leaks(pytester: pytest.Pytester) -> None:
    runner = f"{SABOTAGE}:AllowsUnsandboxedCommands"
    result, report = run_escalation(pytester, "claude", "--runner", runner)
    assert result.ret == 1
    found = verdicts(report, "claude")
    assert found[("saved_output", "bash_unsandboxed")] == "LEAKED"
    assert found[("saved_output", "bash_background_unsandboxed")] == "LEAKED"
    result.stdout.fnmatch_lines(["*RESULT: FAIL*"])


def test_opencode_subagent_without_a_guard_leaks(pytester: pytest.Pytester) -> None:
    runner = f"{SABOTAGE}:SubagentUnguarded"
    result, report = run_escalation(pytester, "opencode", "--runner", runner)
    assert result.ret == 1
    assert verdicts(report, "opencode")[("saved_output", "task_read")] == "LEAKED"


def test_codex_stdin_without_a_sandbox_leaks(pytester: pytest.Pytester) -> None:
    """The bash fed through write_stdin reads job A's files unconfined; the escalation request itself stays refused
    under approval `never` (a closed channel, whatever the sandbox)."""
    runner = f"{SABOTAGE}:StdinUnsandboxed"
    result, report = run_escalation(pytester, "codex", "--runner", runner)
    assert result.ret == 1
    found = verdicts(report, "codex")
    assert found[("saved_output", "write_stdin")] == "LEAKED"
    assert found[("saved_output", "exec_escalated")] == "DENIED"
