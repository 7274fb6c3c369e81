"""The grep tool's fallback: one search of each place when its search of the whole tree missed B's own canaries.

An agent's search tool may stop at its limit or its time limit ("results are incomplete"), or miss B's own canaries
for no reason a layer gives: the control fails, and every place's cell is left INCONCLUSIVE. Searched again one
place at a time — A's canary file and B's own of that place, each by its path (a directory of B's may hold more
matches than the tool shows: its checkout holds the sweep's own output by then) — each place has its own control:
B's canary found at its path proves the tool searches there, and the answer at A's path is that place's. A
whole-tree search a layer refused whole (in its own words) already says what each place's search would.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from boundary import canary
from boundary.model import JobRecord, ToolCall
from boundary.runners.contract import Runner
from boundary.scenarios.sweep.places import NAMED_NONE, Place
from boundary.verdict import UNRECOGNISED, recognise_layer

CALL = "grep_place"  # `grep_place0:<place>` searches A's canary file of the place, `grep_place1:<place>` B's own
CHANNEL = "grep_tool"
CANARY = re.compile(canary.PATTERN)


def key(row: str) -> str:
    """Where `found` keeps a place's own searches (its `:direct` entry: the answer at A's path alone)."""
    return f"{CHANNEL}@{row}"


def greps(runner: Runner, whole: str, places: list[Place], own: list[Place]) -> list[ToolCall]:
    """A search of each place whose own canary of B's the whole-tree search `whole` did not show (all of them
    when it says it was cut short); a place left to the whole search where it cannot help (`_searchable`)."""
    cut = any(note in whole for note in runner.agent.search_incomplete)
    if not cut and recognise_layer(whole, runner.denials) != UNRECOGNISED:
        return []
    mine = {place.name: place for place in own}
    calls = []
    for place in places:
        counterpart = mine.get(place.name)
        if counterpart is None or not _searchable(place, counterpart) or (counterpart.token in whole and not cut):
            continue
        calls += [
            runner.agent.grep(f"{CALL}{i}:{place.name}", canary.PATTERN, path)
            for i, path in enumerate((place.path, counterpart.path))
            if path is not None
        ]
    return calls


def found(record: JobRecord, full: Callable[[str], str], whole: str) -> dict[str, str]:
    """Each place searched on its own: both its searches, and every canary line the whole-tree search found (a find
    there counts wherever it was made); and the answer at A's path alone, for a refusal to name its layer."""
    searched: dict[str, dict[int, str]] = {}
    for call, result in record.results.items():
        head, colon, place = call.partition(":")
        if colon and head.startswith(CALL) and head[len(CALL) :].isdigit():
            searched.setdefault(place, {})[int(head[len(CALL) :])] = full(result)
    finds = [line for line in whole.splitlines() if CANARY.search(line)]
    found: dict[str, str] = {}
    for place, answers in searched.items():
        if 0 not in answers:  # A's search never came back: the place is left to the whole-tree search
            continue
        found[key(place)] = "\n".join([*answers.values(), *finds])
        found[f"{key(place)}:direct"] = answers[0]
    return found


def _searchable(place: Place, own: Place) -> bool:
    """Both jobs' shells named the place's directory, and B's read its own canary back there (else its control
    could never hold, and the search is only a cost)."""
    return own.wrote and all(p.directory not in (None, NAMED_NONE) for p in (place, own))
