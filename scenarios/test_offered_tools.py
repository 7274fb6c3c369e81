"""Offered tools: the model is sent exactly the tools the runner meant (incident 2).

opencode 2.2 began offering its own server tools (`opencode_session_move`, …),
which run unconfined. The check reads the tool list from every request the
scripted model received, so it sees what the agent really offered.
"""

from __future__ import annotations

import pytest

from boundary.offered import OfferedTools
from boundary.plugin import require, scenario_id


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "agent_sandbox" in metafunc.fixturenames:
        metafunc.parametrize("agent_sandbox", [scenario_id(metafunc.config)])


@pytest.mark.live
def test_offered_tools(offered_tools: OfferedTools, agent_sandbox: str) -> None:
    """Every request offered the expected tools, nothing more, and nothing forbidden."""
    require(offered_tools.passed, offered_tools.explain())
