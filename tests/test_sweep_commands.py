"""The sweep's commands fit the agent that runs them: Claude Code asks before it runs a command of 10,000
characters or more (and nobody answers in a job), so even at the cap of discovered places, with long random
paths, job A's plant step and job B's searches stay under that."""

from __future__ import annotations

import secrets
from pathlib import Path
from types import SimpleNamespace

from boundary.agents.claude import ClaudeCode
from boundary.model import Script
from boundary.scenarios import sweep_ipc
from boundary.scenarios.sweep_discover import CAP, discover_lines, new_discovery
from boundary.scenarios.sweep_places import SHELL_PLACES, places_of, plant_steps
from boundary.scenarios.sweep_search import add_searches

CLAUDE_ASKS_AT = 10_000
STATE = "/tmp/bnd-run-123456-abcdefgh/u0/state"


def _commands(script: Script) -> dict[str, int]:
    return {call.id: len(call.args.get("command", "")) for step in script.steps for call in step}


def test_the_plant_and_the_searches_fit_claude_code_at_the_cap() -> None:
    runner = SimpleNamespace(agent=ClaudeCode())
    job = SimpleNamespace(checkout=Path(f"{STATE}/checkouts/job-b.data-a"))
    places = places_of(job)  # type: ignore[arg-type]
    for place in places:
        place.directory = place.directory or f"{STATE}/tmp/job-b.data-a/{secrets.token_hex(8)}"
    discovery = new_discovery()
    for index, place in enumerate(discovery.places):
        place.directory, place.how = f"{STATE}/tmp/job-b.data-a/claude-0/{secrets.token_hex(8)}/d{index}", "mount"
    assert len(discovery.places) == CAP
    plant, search = Script(), Script()
    plant_steps(runner, plant, places, "a", job.checkout, discover_lines(discovery))  # type: ignore[arg-type]
    ipc = sweep_ipc.search_lines(sweep_ipc.IpcTokens.new(), sweep_ipc.IpcTokens.new())
    add_searches(runner, search, job, 1, [*places, *discovery.places], [11, 12, 13, 14], ipc)  # type: ignore[arg-type]
    lengths = {**_commands(plant), **_commands(search)}
    assert len([p for p in places if p.name in SHELL_PLACES]) == len(SHELL_PLACES)
    assert lengths["a-plant"] < CLAUDE_ASKS_AT and lengths["sweeps"] < CLAUDE_ASKS_AT, lengths
