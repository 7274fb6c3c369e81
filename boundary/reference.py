"""The reference runners, one per agent: the default `--runner`, picked by `--agent NAME`."""

from __future__ import annotations

from boundary.claude_runner import ClaudeReferenceRunner
from boundary.codex_runner import CodexReferenceRunner
from boundary.runner import ReferenceRunner, Runner

REFERENCE_RUNNERS: dict[str, type[ReferenceRunner]] = {
    "opencode": ReferenceRunner,
    "claude": ClaudeReferenceRunner,
    "codex": CodexReferenceRunner,
}
AGENTS = tuple(REFERENCE_RUNNERS)


def runner(sandbox: str | None = None, agent: str = "opencode") -> Runner:
    """What a careful runner of `agent` jobs does; `sandbox` replaces its own (e.g. passthrough, a control)."""
    try:
        make = REFERENCE_RUNNERS[agent]
    except KeyError:
        raise ValueError(f"no reference runner for agent {agent!r}; expected one of: {', '.join(AGENTS)}") from None
    return make(sandbox=sandbox) if sandbox else make()
