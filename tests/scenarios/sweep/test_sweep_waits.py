"""A job must not end while what it started still runs: where an agent's shell call returns early (codex's
exec_command yields after 30 s, its command running on), the sweep's jobs wait in more calls."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boundary.agents.codex import Codex
from boundary.agents.opencode import OpenCode
from boundary.model import Script
from boundary.scenarios.sweep.places import ended, wait_for
from boundary.scenarios.sweep.scenario import A_WAITED, A_WAITED_LINE


def _steps(agent: Any, total_s: float) -> list[str]:
    script = Script()
    runner = SimpleNamespace(agent=agent)
    ends = {A_WAITED: A_WAITED_LINE}
    wait_for(runner, script, "a-wait", total_s, Path("/nonexistent"), ends)  # type: ignore[arg-type]
    return [call.id for step in script.steps for call in step]


def test_an_agent_whose_calls_yield_waits_in_more_calls_for_the_whole_time() -> None:
    assert Codex.call_yields_after_s == 30.0
    assert _steps(Codex(), 300) == [f"a-wait-{n}" for n in range(2, 11)]  # with the first: 10 × 30 s = 300 s
    step = Script()
    wait_for(SimpleNamespace(agent=Codex()), step, "b-wait", 60, Path("/nonexistent"), {"x": "y"})  # type: ignore[arg-type]
    assert step.steps[0][0].args["yield_time_ms"] == 30_000


def test_an_agent_whose_calls_wait_for_their_command_needs_no_more() -> None:
    assert OpenCode.call_yields_after_s is None
    assert _steps(OpenCode(), 300) == []


def test_the_harness_reads_the_end_line_a_wait_is_for(tmp_path: Path) -> None:
    """A wait step is passed over once its file ends as the job's shell would make it end; a line merely
    containing the end line (or no file at all) does not count."""
    path = tmp_path / "said"
    look = ended(tmp_path, {"said": "boundary-plant-end"})
    assert not look({})
    path.write_text("x boundary-plant-end\n")
    assert not look({})
    path.write_text("planted\nboundary-plant-end\n")
    assert look({})
