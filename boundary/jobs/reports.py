"""What a session says of a job that went wrong: the problems that make its probes prove nothing, and the words for
why it ended (its report's type is `boundary.results.JobReport`)."""

from __future__ import annotations

from boundary.jobs.job import JobOutcome
from boundary.model import JobRecord
from boundary.text import plain

EARLY_END = "ended before its script did"  # the problem of a job that did (see job_problems)


def job_problems(key: str, outcome: JobOutcome, record: JobRecord, strays: list[str]) -> list[str]:
    """Everything that makes this job's probes prove nothing."""
    stray = [f"the model server got a request no job claimed: {request}" for request in strays]
    problems = [p for p in [outcome.problem, *record.errors, *stray] if p]
    if not record.finished and not problems:
        problems.append(f"job {key} {EARLY_END} (transcript: {outcome.transcript})")
    return problems


def last_words(outcome: JobOutcome) -> str:
    """Why a job ended, as the agent said it: the last lines of its output."""
    try:
        text = plain(outcome.transcript.read_text(errors="replace"))
        lines = [line.strip() for line in text.splitlines() if line.strip()]
    except OSError as error:
        return f"(its transcript could not be read: {error})"
    said = " / ".join(lines[-3:])
    return repr(said[-300:]) if said else f"(it said nothing; exit {outcome.exit_code})"
