"""The one door to DENIED, driven with generated answers (issue 56): whatever a job, a repository or a runner's
wrapper prints, whatever exit code or missing line, no verdict function passes a cell without the evidence a DENIED
rests on, and no failed or missing control is ever credited. Every DENIED names the kind of its evidence."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundary.jobs.job import JobOutcome
from boundary.jobs.reruns import ended_on
from boundary.model import JobRecord
from boundary.model.script import ToolCall
from boundary.reach.judge import ABSENT_ERRNOS, POLICY_ERRNOS, Attempt, Control, judge_attempts, judge_refusal
from boundary.verdict import (
    ENDED_ON,
    HARNESS_NOTE,
    Evidence,
    Finding,
    Proof,
    UnprovenDenial,
    Verdict,
    denied,
    judge,
    layers_in,
    with_ended_refusals,
)
from boundary.writes.answers import Answers

DENIALS = {
    "agent permission": ("rule which prevents", "rejected permission"),
    "runner plugin": ("boundary guard:",),
    "OS sandbox": ("No such file", "Operation not permitted"),
}
ENDING = ("rejected permission",)  # the refusal that ends the agent's job (opencode's auto-rejected ask)
TEXTS = [text for texts in DENIALS.values() for text in texts]
CANARY = "BOUNDARY-CANARY-1"
# tmp_path is one directory for every example of a test: each writes what it reads anew
PROPERTY = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Words a job, a repository, a wrapper or a crash may print: every layer's text, the harness's own, a canary, noise.
words = st.lists(
    st.sampled_from([*TEXTS, HARNESS_NOTE, ENDED_ON, CANARY, "rc=0", "panic:", "umount: /x:", "ok", "\n", " / "])
    | st.text(max_size=12),
    max_size=6,
).map("".join)
maybe_words = st.none() | words


def _one_layer(text: str) -> bool:
    return len(layers_in(text, DENIALS)) == 1 and HARNESS_NOTE not in text


@PROPERTY
@given(
    result=maybe_words,
    leaked=st.lists(st.just(CANARY), max_size=1),
    absent=st.none() | st.just("the target was not there"),
    control=st.none() | st.just("control failed: read returned nothing"),
    problems=st.lists(st.sampled_from(["job timed out", "exited 2", "a stray request"]), max_size=2),
)
def test_a_probe_is_denied_only_on_its_own_answers_layer_text_with_its_control_and_target_there(
    result: str | None, leaked: list[str], absent: str | None, control: str | None, problems: list[str]
) -> None:
    finding = judge(Evidence(leaked, result, absent, control, problems), DENIALS)
    if finding.verdict is Verdict.DENIED:
        assert result is not None and not leaked and not problems and absent is None and control is None
        assert _one_layer(result) and finding.proof in (Proof.REFUSED, Proof.ENDED_REFUSAL)
        assert any(text in result for text in DENIALS[finding.layer])


attempts = st.lists(
    st.builds(
        Attempt,
        label=st.sampled_from(["api:direct", "api:proxy", "control:tcp"]),
        outcome=st.sampled_from(["answered", "error", "listed", "unlisted", "named"]),
        detail=st.sampled_from(
            [
                *(f"{stage} {code}" for stage in ("socket", "connect", "proxy", "send") for code in POLICY_ERRNOS),
                *(f"connect {code}" for code in ABSENT_ERRNOS),
                "connect ETIMEDOUT",
                "proxy NONE",
                "Connection blocked by network allowlist",
                "boundary guard: no",
                "",
            ]
        ),
    ),
    max_size=4,
)
controls = st.builds(
    Control, ok=st.booleans(), closed_by=st.none() | st.sampled_from(list(DENIALS)), why=st.just("control failed")
)


@PROPERTY
@given(tried=attempts, control=controls)
def test_a_reach_cell_is_denied_only_by_a_refusal_or_by_absence_its_control_shows(
    tried: list[Attempt], control: Control
) -> None:
    finding = judge_attempts(tried, control, DENIALS)
    if finding.verdict is Verdict.DENIED:
        assert tried and finding.proof in (Proof.REFUSED, Proof.CONTROLLED)
        if finding.proof is Proof.CONTROLLED:  # something was "not there": only its control can say it is hidden
            assert control.ok


@PROPERTY
@given(result=words, control=controls)
def test_a_reach_refusal_counts_only_with_a_control_that_got_through_or_the_same_layer_closing_it(
    result: str, control: Control
) -> None:
    finding = judge_refusal(result, control, DENIALS)
    if finding.verdict is Verdict.DENIED:
        assert finding.proof is Proof.REFUSED and _one_layer(result)
        assert control.ok or control.closed_by == finding.layer


@PROPERTY
@given(answer=maybe_words, read=maybe_words, channel=st.sampled_from(["write", "edit", "shell"]))
def test_a_write_left_undone_is_denied_only_on_a_layers_words_or_the_shells_own_view(
    tmp_path: Path, answer: str | None, read: str | None, channel: str
) -> None:
    call = ToolCall(f"wr-{channel}-0", "write", {})
    results = {call.id: answer} if answer is not None else {}
    results |= {"wr-read-0": read} if read is not None else {}
    found = Answers.gather({channel: [(0, call)]}, results, [tmp_path / "a.txt"], ("has not been read",))
    finding = found.unchanged(tmp_path / "a.txt", (0, channel), DENIALS, ("Cannot read binary file",))
    if finding.verdict is Verdict.DENIED:
        assert answer is not None and finding.proof in (Proof.REFUSED, Proof.ENDED_REFUSAL, Proof.ELSEWHERE)
        if finding.proof is not Proof.ELSEWHERE:
            assert _one_layer(answer) or (read is not None and _one_layer(read))


@PROPERTY
@given(
    said=words,
    exit_code=st.none() | st.sampled_from([0, 1, 2, 137]),
    issued=st.booleans(),
    errors=st.lists(st.just("an unexpected request"), max_size=1),
)
def test_a_jobs_last_words_answer_a_call_only_from_a_clean_rerun_that_issued_it_in_the_agents_words(
    tmp_path: Path, said: str, exit_code: int | None, issued: bool, errors: list[str]
) -> None:
    transcript = tmp_path / "rerun.log"
    transcript.write_text(said)
    again = JobRecord("job-b.rerun1", errors=errors, issued_at={"a2": 1.0} if issued else {})
    call, unproven = ended_on(["a2", "a3"], again, JobOutcome("job-b.rerun1", exit_code, 1.0, transcript))
    credited = {call: repr(said)} if call and not unproven else {}
    answers = with_ended_refusals({}, credited, DENIALS, ENDING)
    if "a2" in answers:
        assert exit_code == 0 and issued and not errors
        lines = [line.strip("'\"") for line in repr(said).split(" / ")]
        assert any(re.match(r"(?:[A-Za-z]+: )?rejected permission", line) for line in lines)
        assert not any(
            text in said for layer, texts in DENIALS.items() if layer != "agent permission" for text in texts
        )


@pytest.mark.parametrize("verdict", [v for v in Verdict if v is not Verdict.DENIED])
def test_only_denied_carries_a_proof_and_it_always_does(verdict: Verdict) -> None:
    """The door: a DENIED without its kind of evidence, or another verdict with one, cannot be made."""
    with pytest.raises(UnprovenDenial):
        Finding(Verdict.DENIED, "OS sandbox", "refused")
    with pytest.raises(UnprovenDenial):
        Finding(verdict, "", "detail", Proof.REFUSED)
    assert denied(Proof.SEARCHED, "n/a", "no canary").passed
