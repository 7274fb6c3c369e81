"""Decide the scripted model's next turn from what the agent sent.

The next step is read off the conversation itself (which call ids the agent
already holds), so a retried request gets the same answer again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from boundary.model.dialect import ModelRequest
from boundary.model.record import JobRecord
from boundary.model.script import Script, ToolCall


@dataclass(frozen=True)
class Turn:
    calls: list[ToolCall] | None = None
    text: str = ""


def next_turn(script: Script, request: ModelRequest, record: JobRecord) -> Turn:
    if request.tools is None:
        return Turn(text="boundary probe job")  # e.g. the session title request
    record.note_results({k: v for k, v in request.results.items() if k in set(script.call_ids())})
    for index, step in enumerate(script.steps):
        if not all(call.id in request.issued_ids for call in step):
            _run_checkpoints(script, record, below=index)
            problems = [p for call in step for p in schema_problems(call, request.tools)]
            if problems:
                for problem in problems:
                    record.note_error(problem)
                return Turn(text="stopping: the agent's tools do not match the script")
            record.note_issued([call.id for call in step])
            return Turn(calls=step)
    _run_checkpoints(script, record, below=len(script.steps))
    if record.finished:
        record.note_error("unexpected request after the script's final text")
    missing = [i for i in script.call_ids() if i not in request.results]
    if missing:
        record.note_error(f"no tool result came back for {', '.join(missing)}")
    record.finished = True
    return Turn(text=script.final_text)


def _run_checkpoints(script: Script, record: JobRecord, below: int) -> None:
    """Each checkpoint of a step whose results are all back, once (a retried request must not repeat it)."""
    back = set(record.results)
    due = [i for i in script.checkpoints if i < below and i not in record.checkpoints_done]
    for index in sorted(i for i in due if all(call.id in back for call in script.steps[i])):
        record.checkpoints_done.add(index)
        try:
            script.checkpoints[index]()
        except Exception as error:  # the harness's own look failed: the probes it serves prove nothing
            record.note_error(f"checkpoint after step {index} failed: {type(error).__name__}: {error}")


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
