"""A step that only waits for what the harness can see from outside is not asked for once that holds: the agent
spends no model round trip and no shell start on it. Once passed over it stays passed over; a step due before it
holds is asked for as usual; a checkpoint after a passed-over step still runs."""

from __future__ import annotations

from boundary.model.conversation import next_turn
from boundary.model.record import JobRecord
from boundary.model.script import Script
from tests.model.test_script_checkpoints import call, request


def _script(holds: list[bool], log: list[str]) -> Script:
    script = Script()
    script.add_step(call("work"))
    script.add_step(call("wait-2"), unless=lambda _: holds[0])
    script.add_step(call("wait-3"), unless=lambda _: holds[0])
    script.checkpoint(lambda: log.append("waited"))
    return script


def test_a_wait_whose_condition_holds_is_never_asked_for() -> None:
    holds, log, record = [True], [], JobRecord("j")
    script = _script(holds, log)
    assert next_turn(script, request([], []), record).calls == script.steps[0]
    back = request(["work"], ["work"])
    assert next_turn(script, back, record).text == script.final_text
    assert record.skipped == {"wait-2", "wait-3"}
    assert record.errors == []  # a passed-over call is not a missing result
    assert log == ["waited"]  # its checkpoint ran all the same
    assert record.settled("wait-3") and not record.settled("nothing")


def test_a_wait_due_before_its_condition_holds_is_asked_for() -> None:
    holds, log, record = [False], [], JobRecord("j")
    script = _script(holds, log)
    next_turn(script, request([], []), record)
    assert next_turn(script, request(["work"], ["work"]), record).calls == script.steps[1]
    holds[0] = True
    after = request(["work", "wait-2"], ["work", "wait-2"])
    assert next_turn(script, after, record).text == script.final_text
    assert record.skipped == {"wait-3"}
    assert log == ["waited"]


def test_a_passed_over_step_stays_passed_over() -> None:
    """A retried request gets the same answer, even if the harness's look would now say otherwise."""
    holds, record = [True], JobRecord("j")
    script = _script(holds, [])
    back = request(["work"], ["work"])
    next_turn(script, back, record)
    holds[0] = False
    assert next_turn(script, back, record).text == script.final_text


def test_a_look_that_fails_asks_for_the_step() -> None:
    """The harness cannot tell: the step runs and checks for itself."""
    script, record = Script(), JobRecord("j")
    script.add_step(call("wait-2"), unless=lambda _: 1 / 0 > 0)
    assert next_turn(script, request([], []), record).calls == script.steps[0]
    assert "could not look whether step 0 is still needed" in record.errors[0]


def test_the_last_checkpoint_may_give_the_job_more_to_do() -> None:
    """The sweep's job B plants its own canaries first; only then, once job A has planted, does the harness add
    B's searches: the job gets them in the same turn, not the final text."""
    script, record = Script(), JobRecord("j")
    script.add_step(call("plant"))
    script.checkpoint(lambda: script.add_step(call("search")))
    next_turn(script, request([], []), record)
    assert next_turn(script, request(["plant"], ["plant"]), record).calls == [call("search")]
    done = request(["plant", "search"], ["plant", "search"])
    assert next_turn(script, done, record).text == script.final_text
    assert record.errors == []
