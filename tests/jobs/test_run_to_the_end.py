"""A job that ends early (a refused call ends `opencode run`) has the calls it left unanswered run again in new
jobs: each rerun is named after the run it continues, what it printed is read with the rest, and no rerun starts
once the caller says a start would prove nothing."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boundary.jobs.job import JobOutcome
from boundary.jobs.session import Session
from boundary.model import JobRecord, Script, ToolCall
from boundary.results import JobReport


class EndsOnRefusals(Session):
    """Each job answers its calls in order up to the first refused one, and ends on it, printing its id."""

    refused: frozenset[str] = frozenset()
    started: list[str]

    def run(self, job: Any, script: Script, resumed: bool = False, operator: Any = None, label: str = "") -> Any:
        key = f"{self.scenario}.{job.name}{label or ('.resumed' if resumed else '')}"
        self.started.append(key)
        transcript = self.workdir / "transcripts" / f"{key}.log"
        transcript.parent.mkdir(parents=True, exist_ok=True)
        record = JobRecord(key)
        for call in (call for step in script.steps for call in step):
            record.issued_at[call.id] = 1.0
            if call.id in self.refused:
                transcript.write_text(f"refused {call.id}\n")
                return JobOutcome(key, 0, 0.1, transcript), record
            record.results[call.id] = "ok"
        transcript.write_text("done\n")
        record.finished = True
        return JobOutcome(key, 0, 0.1, transcript), record


def session(tmp_path: Path, refused: set[str]) -> EndsOnRefusals:
    runs = EndsOnRefusals("tamper", SimpleNamespace(), tmp_path)  # type: ignore[arg-type]
    runs.refused, runs.started = frozenset(refused), []
    return runs


def script_of(*ids: str) -> Script:
    script = Script()
    script.add_step(*(ToolCall(call_id, "bash", {"command": "true"}) for call_id in ids))
    return script


def test_a_resumed_jobs_reruns_are_its_own_not_its_first_starts(tmp_path: Path) -> None:
    runs = session(tmp_path, {"a2"})
    job = SimpleNamespace(name="job-b")
    runs.run_to_the_end(job, script_of("a1", "a2", "a3"))  # type: ignore[arg-type]
    _, record, _ = runs.run_to_the_end(job, script_of("a1", "a2", "a3"), resumed=True)  # type: ignore[arg-type]
    first, again = ["tamper.job-b", "tamper.job-b.rerun1", "tamper.job-b.rerun2"], "tamper.job-b.resumed"
    assert runs.started == [*first, again, f"{again}.rerun1", f"{again}.rerun2"]  # a2 ends rerun1 too, run alone
    assert record.results == {"a1": "ok", "a3": "ok"} and "a2" in record.ended_on
    printed = [path.read_text() for path in runs.transcripts_of("job-b.resumed")]
    assert printed == ["refused a2\n", "refused a2\n", "done\n"]  # the rerun's words are read with the first run's


def test_no_rerun_starts_once_halted(tmp_path: Path) -> None:
    runs = session(tmp_path, {"a1"})
    job = SimpleNamespace(name="job-b")
    halt = lambda: "a write landed"  # noqa: E731
    _, record, note = runs.run_to_the_end(job, script_of("a1", "a2"), label=".database", halt=halt)  # type: ignore[arg-type]
    assert runs.started == ["tamper.job-b.database"]
    assert "a2" not in record.results and not record.finished
    assert "were not run again: a write landed" in note


class EndsBadly(EndsOnRefusals):
    """Like EndsOnRefusals, but each rerun ends as `ending` says: timed out, crashed, before issuing its call, or
    with an error at the model server; its last words always carry a refusal."""

    ending = "timeout"

    def run(self, job: Any, script: Script, resumed: bool = False, operator: Any = None, label: str = "") -> Any:
        if ".rerun" not in label:
            return super().run(job, script, resumed, operator, label)
        key = f"{self.scenario}.{job.name}{label}"
        self.started.append(key)
        transcript = self.workdir / "transcripts" / f"{key}.log"
        transcript.write_text("Error: The user rejected permission to use this specific tool call.\n")
        record = JobRecord(key)
        first = script.steps[0][0].id
        if self.ending != "never issued":
            record.issued_at[first] = 1.0
        if self.ending == "server error":
            record.errors.append("a request the script did not expect")
        exit_code = {"timeout": None, "crash": 2}.get(self.ending, 0)
        return JobOutcome(key, exit_code, 0.1, transcript), record


def test_a_rerun_that_did_not_end_cleanly_credits_no_call_with_its_last_words(tmp_path: Path) -> None:
    """A rerun that timed out, crashed, never issued the call, or met an error at the model server: its last words
    are not the answer of the call it ended on, whatever they say (issue 56 item 1)."""
    for ending in ("timeout", "crash", "never issued", "server error"):
        runs = EndsBadly("tamper", SimpleNamespace(), tmp_path / ending)  # type: ignore[arg-type]
        runs.refused, runs.started, runs.ending = frozenset({"a2"}), [], ending
        _, record, note = runs.run_to_the_end(SimpleNamespace(name="job-b"), script_of("a1", "a2", "a3"))  # type: ignore[arg-type]
        assert record.ended_on == {}, ending
        assert "a2" not in record.results and "not that call's answer" in note, (ending, note)


def test_a_clean_reruns_refusal_of_the_one_call_it_issued_is_credited(tmp_path: Path) -> None:
    runs = EndsBadly("tamper", SimpleNamespace(), tmp_path)  # type: ignore[arg-type]
    runs.refused, runs.started, runs.ending = frozenset({"a2"}), [], "clean"
    _, record, _ = runs.run_to_the_end(SimpleNamespace(name="job-b"), script_of("a1", "a2"))  # type: ignore[arg-type]
    assert list(record.ended_on) == ["a2"] and "rejected permission" in record.ended_on["a2"]


def test_a_reruns_problems_are_the_jobs_problems(tmp_path: Path) -> None:
    """What went wrong in a rerun (a timeout) voids the job's probes as its first run's would."""
    runs = EndsBadly("tamper", SimpleNamespace(), tmp_path)  # type: ignore[arg-type]
    runs.refused, runs.started, runs.ending = frozenset({"a2"}), [], "timeout"
    runs.jobs.append(JobReport("tamper.job-b", 0.1, [], 0, [], [], None, 0.0, []))
    runs.jobs.append(
        JobReport("tamper.job-b.rerun1", 0.1, [], None, ["job tamper.job-b.rerun1 timed out"], [], None, 0.0, [])
    )
    runs.jobs.append(JobReport("tamper.job-b.resumed", 0.1, [], 0, ["not this run's"], [], None, 0.0, []))
    assert runs.problems_of("job-b") == ["job tamper.job-b.rerun1 timed out"]
    assert runs.problems_of("job-c") == ["job tamper.job-c never ran"]
