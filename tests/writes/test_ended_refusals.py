"""A call whose job ended on it, run alone, with the agent printing a refusal in one layer's words (opencode's
`run` auto-rejects every `ask` and ends) is DENIED by that layer, not INCONCLUSIVE: the model never got the
refusal back, but the layer refused that call (issue 43 item 7)."""

from __future__ import annotations

from pathlib import Path

from boundary.agents.opencode import ASK_REJECTED, OpenCode
from boundary.model.script import ToolCall
from boundary.verdict import ENDED_ON, Verdict, with_ended_refusals
from boundary.writes.answers import Answers
from boundary.writes.shell import SHELL_START

DENIALS = OpenCode.denials
AGENT = OpenCode.ending_refusals  # the refusals that end its job
# As opencode 1.18.33's `run` printed it, cut to the agent's last words (`boundary.jobs.reports.last_words`).
SAID = (
    "'! permission requested: external_directory (/state/checkouts/job-a/*); auto-rejecting / ✗ Read "
    f"/state/checkouts/job-a/notes.txt failed / Error: {ASK_REJECTED}.'"
)


def test_a_refusal_that_ended_the_job_is_the_calls_answer() -> None:
    answers = with_ended_refusals({"other": "ok"}, {"read-a": SAID}, DENIALS, AGENT)
    assert answers == {"other": "ok", "read-a": f"Error: {ASK_REJECTED}. {ENDED_ON}{SAID})"}


def test_last_words_no_layer_claims_leave_the_call_unanswered() -> None:
    crashed = "'panic: runtime error / exit status 2'"
    assert with_ended_refusals({}, {"read-a": crashed}, DENIALS, AGENT) == {}


def test_a_wrappers_or_teardowns_last_words_are_no_layers_refusal() -> None:
    """Only the agent's own refusal texts tell that it refused the call it ended on: an OS layer's words in the
    last lines (the runner's wrapper unmounting, a crash) say nothing of that call (issue 56 item 1)."""
    denials = {**DENIALS, "OS sandbox": ("Operation not permitted",)}
    teardown = "'✗ Read /state/checkouts/job-a/notes.txt / umount: /state/job-b: Operation not permitted'"
    assert with_ended_refusals({}, {"read-a": teardown}, denials, AGENT) == {}
    both = f"'Error: {ASK_REJECTED}. / umount: /x: Operation not permitted'"  # two layers' words: which one?
    assert with_ended_refusals({}, {"read-a": both}, denials, AGENT) == {}


def test_an_answer_that_came_back_is_never_replaced() -> None:
    assert with_ended_refusals({"read-a": "the file"}, {"read-a": SAID}, DENIALS, AGENT) == {"read-a": "the file"}


def test_a_write_channel_whose_job_ended_on_a_refusal_is_denied_by_that_layer(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    calls = {
        "write": [(0, ToolCall("wr-write-0", "write", {}))],
        "shell": [(0, ToolCall("wr-shell-0", "bash", {}))],
    }
    ended = {"wr-write-0": SAID, "wr-shell-0": SAID}
    answers = Answers.gather(calls, with_ended_refusals({}, ended, DENIALS, AGENT), [target], (), frozenset(ended))
    for channel in ("write", "shell"):
        finding = answers.unchanged(target, (0, channel), DENIALS, ())
        assert finding.verdict == Verdict.DENIED and finding.layer == "agent permission", finding
    bare = Answers.gather(calls, {}, [target], ())  # today's: no answer is no proof
    assert bare.unchanged(target, (0, "write"), DENIALS, ()).verdict == Verdict.INCONCLUSIVE


def test_a_shell_answer_that_prints_the_ended_marker_is_still_split_by_its_targets(tmp_path: Path) -> None:
    """Only a call the job really ended on is taken whole: a job that prints the harness's words for one (and a
    layer's refusal) from a command that ran is held to its targets' end markers, as any shell answer is."""
    target = tmp_path / "a.txt"
    calls = {"shell": [(0, ToolCall("wr-shell-0", "bash", {}))]}
    printed = with_ended_refusals({}, {"wr-shell-0": SAID}, DENIALS, AGENT)["wr-shell-0"]
    forged = {"wr-shell-0": f"{SHELL_START} 0\n{printed}"}  # its first line ran, its end marker never came
    finding = Answers.gather(calls, forged, [target], ()).unchanged(target, (0, "shell"), DENIALS, ())
    assert finding.verdict == Verdict.INCONCLUSIVE and "end marker" in finding.detail, finding


def test_only_a_refusal_that_ends_the_job_printed_at_a_lines_start_answers_the_call() -> None:
    """A deny rule's refusal answered earlier in the job, or the ask's words inside a teardown's line (a file name
    `git status` prints), say nothing of the call the job ended on (the review of issue 56)."""
    earlier = "'Error: The user has specified a rule which prevents you from using this specific tool call / done'"
    assert with_ended_refusals({}, {"read-a": earlier}, DENIALS, AGENT) == {}
    printed = f"'[runner] post-job: git status --short / ?? \"{ASK_REJECTED}.md\" / [runner] job done'"
    assert with_ended_refusals({}, {"read-a": printed}, DENIALS, AGENT) == {}
