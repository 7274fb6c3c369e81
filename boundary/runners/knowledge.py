"""What boundary knows for the pinned versions, which a runner command may claim by name instead of copying it.

In `describe`, a layer's denials may be one reference (`"OS sandbox": "srt"`) or a list of texts in which an entry
`boundary:NAME` stands for a reference's texts (`["boundary:agent", "my guard:"]`); `expected_tools` and
`forbidden_tools` may hold `boundary:reference`, the reference runner's own set for the runner's agent, and
`expected_tools` `boundary:agent-default`, what the pinned agent offers when started with its default settings.
"""

from __future__ import annotations

from boundary.agents.base import Agent
from boundary.agents.claude import ClaudeCode
from boundary.agents.codex import Codex
from boundary.agents.opencode import OpenCode
from boundary.runners import REFERENCE_RUNNERS
from boundary.sandboxes import OS_DENIALS

PREFIX = "boundary:"
AGENTS: dict[str, type[Agent]] = {"opencode": OpenCode, "claude": ClaudeCode, "codex": Codex}
# A sandbox's refusals as the reference runners read them: the OS's errors, and codex's policy texts for its own.
SANDBOX_TEXTS = {"srt": OS_DENIALS, "bwrap": OS_DENIALS, "claude": OS_DENIALS}
DENIAL_REFERENCES = ("agent", *SANDBOX_TEXTS, "codex")
TOOL_REFERENCES = ("reference", "agent-default")


def denial_texts(reference: str, agent: str) -> tuple[str, ...] | None:
    """The texts a reference stands for, for jobs of `agent` (None: no such reference).

    `agent`: the agent's own refusals (its permission rules; codex's sandbox policy); a sandbox's name: what
    that sandbox's refusals say."""
    own = tuple(text for texts in AGENTS[agent].denials.values() for text in texts)
    if reference == "agent":
        return own
    if reference == "codex":
        return (*OS_DENIALS, *AGENTS["codex"].denials["OS sandbox"])
    return SANDBOX_TEXTS.get(reference)


def tool_names(entry: str, agent: str, forbidden: bool = False) -> tuple[str, ...] | None:
    """The tools (or forbidden patterns) an entry stands for: itself, the reference runner's set, or the agent's
    default tools (None: an unknown reference, or one that stands for no forbidden patterns)."""
    if not entry.startswith(PREFIX):
        return (entry,)
    name = entry.removeprefix(PREFIX)
    if name == "agent-default" and not forbidden:
        return tuple(sorted(AGENTS[agent].default_tools))
    if name != "reference":
        return None
    reference = REFERENCE_RUNNERS[agent]()
    return reference.forbidden_tools() if forbidden else tuple(sorted(reference.expected_tools()))
