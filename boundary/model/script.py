"""A script for the scripted model: tool-call steps, then a final text.

A script is data. Each step is a batch of tool calls the model emits in one
assistant turn; the server moves to the next step once the agent has sent
back every result of the previous one.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class ToolCall:
    """One call the model makes. `id` is unique within the job."""

    id: str
    tool: str
    args: dict[str, Any]

    def arguments_json(self) -> str:
        return json.dumps(self.args)


@dataclass
class Script:
    # True: it scripts the subagents a tool starts as well (their conversations are its steps while one runs);
    # False: the scripted model ends any conversation but the job's own at once.
    serves_subagents: ClassVar[bool] = False
    steps: list[list[ToolCall]] = field(default_factory=list)
    final_text: str = "done"
    # step index -> called once every result of that step is back, before the model answers again:
    # the harness looks from outside at what the step changed (e.g. hashes files a write channel targeted).
    checkpoints: dict[int, Callable[[], None]] = field(default_factory=dict)
    # step index -> a condition on the results back so far (call id -> result) or on what the harness sees from
    # outside: a step that is no longer needed once it holds is not asked for (each such call costs the agent a
    # model round trip and a shell start for nothing).
    skip_when: dict[int, Callable[[dict[str, str]], bool]] = field(default_factory=dict)

    def call_ids(self) -> list[str]:
        return [call.id for step in self.steps for call in step]

    def add_step(self, *calls: ToolCall, unless: Callable[[dict[str, str]], bool] | None = None) -> None:
        """A step of `calls`; `unless`: not asked for if it holds when the step is due (and never after)."""
        if calls:
            self.steps.append(list(calls))
            if unless is not None:
                self.skip_when[len(self.steps) - 1] = unless

    def checkpoint(self, check: Callable[[], None]) -> None:
        """Run `check` once the last step added so far has all its results back."""
        if not self.steps:
            raise ValueError("a checkpoint follows a step: add one first")
        self.checkpoints[len(self.steps) - 1] = check

    def remaining(self, left: Callable[[str], bool], ran: set[int]) -> tuple[Script, list[Callable[[], None]]]:
        """What a new job must still do: each call `left` holds for, one a step (a new job answers each it can up
        to the one that ends it), with its step's condition; each checkpoint not yet `ran` after the last of its
        step's calls left, or, when none is, in the list to run now. `ran` (original step indices) is kept up to
        date as the new job runs them. Steps a checkpoint adds meanwhile go to this script, for the next job."""
        rest, due = Script(final_text=self.final_text), list[Callable[[], None]]()
        for index, step in enumerate(self.steps):
            calls = [call for call in step if left(call.id)]
            for call in calls:
                rest.add_step(call, unless=self.skip_when.get(index))
            check = self.checkpoints.get(index)
            if check is None or index in ran:
                continue
            once = functools.partial(_once, ran, index, check)
            if calls:
                rest.checkpoint(once)
            else:
                due.append(once)
        return rest, due

    def add_calls(self, calls: list[ToolCall], serial_tools: frozenset[str]) -> None:
        """One step for all calls that may run at once, then one step for each serial call."""
        self.add_step(*(call for call in calls if call.tool not in serial_tools))
        for call in calls:
            if call.tool in serial_tools:
                self.add_step(call)


def _once(ran: set[int], index: int, check: Callable[[], None]) -> None:
    if index not in ran:
        ran.add(index)
        check()
