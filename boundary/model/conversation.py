"""Decide the scripted model's next turn from what the agent sent.

The next step is read off the conversation itself (which call ids the agent
already holds), so a retried request gets the same answer again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boundary.model.dialect import ModelRequest
from boundary.model.record import JobRecord
from boundary.model.script import Script, ToolCall


@dataclass(frozen=True)
class Turn:
    calls: list[ToolCall] | None = None
    text: str = ""


# What the scripted model answers a conversation that is not the job's own (a subagent a tool started).
OTHER_CONVERSATION = "boundary: this conversation is not the job's script; it ends here"


def next_turn(script: Script, request: ModelRequest, record: JobRecord) -> Turn:
    if request.tools is None:
        return Turn(text="boundary probe job")  # e.g. the session title request
    if _another_conversation(script, request, record):
        return Turn(text=OTHER_CONVERSATION)
    record.note_results({k: v for k, v in request.results.items() if k in set(script.call_ids())})
    load = request.load_deferred
    if load is not None and load.id not in request.issued_ids:
        return Turn(calls=[load])  # every tool the agent defers, offered whole before the script asks for any
    while True:
        known = len(script.steps)
        calls = _next_step(script, request, record)
        if calls is not None:
            return Turn(calls=calls) if calls else Turn(text="stopping: the agent's tools do not match the script")
        _run_checkpoints(script, record, below=known)
        if len(script.steps) == known:  # the last checkpoint may give the job more to do
            break
    if record.finished:
        record.note_error("unexpected request after the script's final text")
    missing = [i for i in script.call_ids() if i not in request.results and i not in record.skipped]
    if missing:
        record.note_error(f"no tool result came back for {', '.join(missing)}")
    record.finished = True
    return Turn(text=script.final_text)


def _another_conversation(script: Script, request: ModelRequest, record: JobRecord) -> bool:
    """A request from another conversation of the agent's (a task or agent tool's subagent), not the job's own: it
    names another session than the job's own, or it holds none of the calls given so far once a result came back
    (a retry of the job's first turn holds none either, but comes before any). A subagent may continue an old
    session whose calls share the script's ids (a task tool handed another job's session): its session tells it
    apart. Ending it at once keeps the script in the job's own conversation."""
    if script.serves_subagents:
        return False
    own = record.own_sessions
    if own and request.sessions and own.isdisjoint(request.sessions):
        return True
    return not request.issued_ids and bool(record.results_so_far())


def _next_step(script: Script, request: ModelRequest, record: JobRecord) -> list[ToolCall] | None:
    """The first step not yet issued nor passed over (an empty list: its calls do not fit the agent's tools);
    None when every step is."""
    for index, step in enumerate(script.steps):
        if all(call.id in request.issued_ids or call.id in record.skipped for call in step):
            continue
        _run_checkpoints(script, record, below=index)
        if _skips(script, record, index):
            continue
        problems = [p for call in step for p in schema_problems(call, request.tools or {})]
        for problem in problems:
            record.note_error(problem)
        if problems:
            return []
        record.note_issued([call.id for call in step], request.sessions)
        return step
    return None


def _skips(script: Script, record: JobRecord, index: int) -> bool:
    """The step only waits for what the harness sees already holds: it is not asked for (and, once passed over,
    never is: a retried request gets the same answer)."""
    holds = script.skip_when.get(index)
    try:
        skip = holds is not None and holds(record.results_so_far())
    except Exception as error:  # the harness's look failed: ask the step, which checks for itself
        record.note_error(f"could not look whether step {index} is still needed: {type(error).__name__}: {error}")
        return False
    if skip:
        record.note_skipped([call.id for call in script.steps[index]])
    return skip


def _run_checkpoints(script: Script, record: JobRecord, below: int) -> None:
    """Each checkpoint of a step whose results are all back, once (a retried request must not repeat it)."""
    back = set(record.results) | record.skipped
    due = [i for i in script.checkpoints if i < below and i not in record.checkpoints_done]
    for index in sorted(i for i in due if all(call.id in back for call in script.steps[i])):
        record.checkpoints_done.add(index)
        run_checkpoint(script.checkpoints[index], record, f"after step {index}")


def run_checkpoint(check: Callable[[], None], record: JobRecord, when: str) -> None:
    try:
        check()
    except Exception as error:  # the harness's own look failed: the probes it serves prove nothing
        record.note_error(f"checkpoint {when} failed: {type(error).__name__}: {error}")


def schema_problems(call: ToolCall, tools: dict[str, dict[str, Any]]) -> list[str]:
    """Why the agent cannot take this call as scripted (a pinned upgrade renamed something)."""
    if call.tool not in tools:
        return [f"call {call.id}: tool {call.tool!r} is not offered (offered: {', '.join(sorted(tools))})"]
    schema = tools[call.tool]
    known = set(schema.get("properties", {}))
    unknown = sorted(set(call.args) - known)
    absent = sorted(set(schema.get("required", [])) - set(call.args))
    problems = []
    if unknown:
        problems.append(
            f"call {call.id}: tool {call.tool!r} has no parameter {', '.join(unknown)} "
            f"(its schema has: {', '.join(sorted(known))}); update the agent's channel arguments"
        )
    if absent:
        problems.append(f"call {call.id}: tool {call.tool!r} requires {', '.join(absent)}, the script omits it")
    return problems
