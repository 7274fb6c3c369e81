"""Runners under test: the contract, the command adapter, and one reference runner per agent.

`runner` is the default `--runner`: the reference runner of the agent asked for (`--agent NAME`).
May import agents, toolchain, host, sandboxes and the core modules; never jobs, scenarios, report or suite.
"""

from __future__ import annotations

from boundary.runners.claude import ClaudeRunner
from boundary.runners.codex import CodexRunner
from boundary.runners.contract import Job, Runner
from boundary.runners.opencode import OpencodeRunner
from boundary.runners.reference import ReferenceRunner

REFERENCE_RUNNERS: dict[str, type[ReferenceRunner]] = {
    "opencode": OpencodeRunner,
    "claude": ClaudeRunner,
    "codex": CodexRunner,
}
AGENTS = tuple(REFERENCE_RUNNERS)

__all__ = ["AGENTS", "REFERENCE_RUNNERS", "Job", "Runner", "runner"]


def runner(sandbox: str | None = None, agent: str = "opencode") -> Runner:
    """What a careful runner of `agent` jobs does; `sandbox` replaces its own (e.g. passthrough, a control)."""
    try:
        make = REFERENCE_RUNNERS[agent]
    except KeyError:
        raise ValueError(f"no reference runner for agent {agent!r}; expected one of: {', '.join(AGENTS)}") from None
    return make(sandbox)
