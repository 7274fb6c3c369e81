"""Checkpoints: the harness looks from outside after a step, exactly once, once the step's results are back."""

from __future__ import annotations

from typing import Any

import pytest

from boundary.model.chat import ChatCompletions
from boundary.model.conversation import next_turn
from boundary.model.dialect import ModelRequest
from boundary.model.record import JobRecord
from boundary.model.script import Script, ToolCall

READ_SCHEMA = {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]}
TOOLS = [{"type": "function", "function": {"name": "read", "parameters": READ_SCHEMA}}]


def call(call_id: str) -> ToolCall:
    return ToolCall(call_id, "read", {"filePath": f"/{call_id}"})


def request(issued: list[str], results: list[str]) -> ModelRequest:
    """The conversation the agent sends: each issued call as an assistant turn, with its result if it came back."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for call_id in issued:
        messages.append({"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": {}}]})
        if call_id in results:
            messages.append({"role": "tool", "tool_call_id": call_id, "content": f"result of {call_id}"})
    return ChatCompletions().parse({"messages": messages, "tools": TOOLS})


@pytest.fixture
def log() -> list[str]:
    return []


@pytest.fixture
def script(log: list[str]) -> Script:
    script = Script()
    script.add_step(call("a1"), call("a2"))
    script.checkpoint(lambda: log.append("after a"))
    script.add_step(call("b1"))
    script.checkpoint(lambda: log.append("after b"))
    return script


def test_checkpoint_needs_a_step() -> None:
    """A checkpoint follows a step: on an empty script it is refused."""
    with pytest.raises(ValueError):
        Script().checkpoint(lambda: None)


def test_checkpoint_attaches_to_the_last_step() -> None:
    """A checkpoint belongs to the last step added so far; an empty add_step adds no step."""
    script = Script()
    script.add_step(call("a"))
    script.add_step()
    script.checkpoint(lambda: None)
    assert list(script.checkpoints) == [0]


def test_each_checkpoint_runs_once_after_its_step(script: Script, log: list[str]) -> None:
    """Each checkpoint runs when its step's results come back, before the next step, and never again on retry."""
    record = JobRecord("j")
    assert next_turn(script, request([], []), record).calls == script.steps[0]
    assert log == []
    back_from_a = request(["a1", "a2"], ["a1", "a2"])
    assert next_turn(script, back_from_a, record).calls == script.steps[1]
    assert log == ["after a"]
    assert next_turn(script, back_from_a, record).calls == script.steps[1]  # a retry
    assert log == ["after a"]
    back_from_b = request(["a1", "a2", "b1"], ["a1", "a2", "b1"])
    assert next_turn(script, back_from_b, record).text == script.final_text
    assert log == ["after a", "after b"]
    next_turn(script, back_from_b, record)  # a retry of the last request
    assert log == ["after a", "after b"]
    assert record.checkpoints_done == {0, 1}


def test_request_without_tools_runs_no_checkpoint(script: Script, log: list[str]) -> None:
    """The session-title request (no tools) neither advances the script nor runs a checkpoint."""
    record = JobRecord("j")
    messages = [{"role": "user", "content": "go"}]
    next_turn(script, ChatCompletions().parse({"messages": messages}), record)
    assert log == [] and not record.checkpoints_done


def test_checkpoint_waits_for_the_steps_results(script: Script, log: list[str]) -> None:
    """A step issued but with results still missing has not finished: its checkpoint does not run yet."""
    record = JobRecord("j")
    next_turn(script, request([], []), record)
    next_turn(script, request(["a1", "a2"], ["a1"]), record)
    assert log == []
    next_turn(script, request(["a1", "a2", "b1"], ["a1", "a2"]), record)
    assert log == ["after a"]


def test_failing_checkpoint_is_a_record_error(log: list[str]) -> None:
    """A checkpoint that raises becomes an error on the job's record; the script goes on, and it is not rerun."""
    runs = []

    def broken() -> None:
        runs.append(1)
        raise RuntimeError("cannot hash")

    script = Script()
    script.add_step(call("a1"))
    script.checkpoint(broken)
    script.add_step(call("b1"))
    record = JobRecord("j")
    next_turn(script, request([], []), record)
    turn = next_turn(script, request(["a1"], ["a1"]), record)
    assert turn.calls == script.steps[1]
    assert len(record.errors) == 1
    assert "checkpoint after step 0 failed: RuntimeError: cannot hash" in record.errors[0]
    next_turn(script, request(["a1"], ["a1"]), record)
    assert runs == [1] and len(record.errors) == 1


def test_what_a_new_job_must_still_do_keeps_checkpoints_and_conditions() -> None:
    """After an early end, the calls left run one a step in a new job; each step's checkpoint goes with the last
    of its calls left (the write attack's look after each channel), or is due at once when none is left; each
    runs once, whichever job reaches it."""
    log: list[str] = []
    script = Script()
    script.add_step(call("a1"), call("a2"))
    script.checkpoint(lambda: log.append("after a"))
    script.add_step(call("b1"), unless=lambda _: False)
    script.checkpoint(lambda: log.append("after b"))
    script.add_step(call("c1"))
    script.checkpoint(lambda: log.append("after c"))
    ran: set[int] = set()
    answered, ended = {"a1"}, {"c1"}
    rest, due = script.remaining(lambda c: c not in answered and c not in ended, ran)
    assert rest.steps == [[call("a2")], [call("b1")]]
    assert set(rest.checkpoints) == {0, 1} and set(rest.skip_when) == {1}
    for check in due:
        check()
    assert log == ["after c"] and ran == {2}
    rest.checkpoints[0]()
    rest.checkpoints[0]()
    assert log == ["after c", "after a"] and ran == {0, 2}
    again, _ = script.remaining(lambda c: c == "b1", ran)
    assert again.steps == [[call("b1")]] and set(again.checkpoints) == {0}
