"""`boundary:agent-default` names what each pinned agent offers when started with its default tools: held to what
the agent really sends the model, so a pin that moves tells the runner author which tools changed."""

from __future__ import annotations

import pytest
from live import run_suite
from paths import TESTS

RUNNERS = {"opencode": "OpencodeDefaultTools", "claude": "ClaudeDefaultTools", "codex": "CodexDefaultTools"}


@pytest.mark.live
@pytest.mark.parametrize("agent", RUNNERS)
def test_each_agents_default_tools_are_what_it_offers(pytester: pytest.Pytester, monkeypatch, agent: str) -> None:
    monkeypatch.setenv("PYTHONPATH", str(TESTS))  # the runners beside the tests
    runner = f"default_tools_runners:{RUNNERS[agent]}"
    options = ("--agent", agent, "--scenario", "cross_job", "--boundary-floor", "-k", "offered_tools")
    result, report = run_suite(pytester, "--runner", runner, *options)
    offered = report["scenarios"][f"{agent}/cross_job"]["offered_tools"]
    assert offered["passed"], f"added: {offered['added']}, missing: {offered['missing']}\n{result.stdout.str()[-2000:]}"
