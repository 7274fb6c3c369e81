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
