"""`runner check`'s one job reads the checkout through each agent's own vocabulary: codex has no read tool."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from boundary.agents.claude import ClaudeCode
from boundary.agents.codex import Codex
from boundary.jobs.first_job import _read


@pytest.mark.parametrize(("agent", "tool"), [(Codex, "exec_command"), (ClaudeCode, "Read")])
def test_the_checks_read_goes_through_a_tool_the_agent_has(agent: Any, tool: str) -> None:
    runner = cast(Any, SimpleNamespace(agent=agent()))
    call = _read(runner, Path("/job/it's here/README.md"))
    assert call.tool == tool
    assert call.id == "read"
    if tool == "exec_command":
        assert call.args["cmd"] == "cat '/job/it'\"'\"'s here/README.md'"
