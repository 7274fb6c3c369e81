"""A job that ends before its script did goes on in new jobs, one call a step (`Session.run_to_the_end`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from boundary.jobs.job import JobOutcome
from boundary.jobs.reports import last_words
from boundary.model import JobRecord, Script
from boundary.model.conversation import run_checkpoint
from boundary.runners.contract import Job

# New jobs for the calls a job never answered: each answers some or shows which call ends it, so a script of
# N calls needs at most N; a careful runner needs none, one that ends a job on every refusal pays a job each.
MAX_RERUNS = 64


class Runs(Protocol):
    """What this needs of a session (`boundary.jobs.session.Session`, which calls it): to run a job, and to forgive
    a job's early end once its unanswered calls ran in later jobs."""

    def run(
        self, job: Job, script: Script, resumed: bool = ..., *, label: str = ...
    ) -> tuple[JobOutcome, JobRecord]: ...

    def forgive_early_end(self, name: str) -> None: ...


def run_to_the_end(
    session: Runs,
    job: Job,
    script: Script,
    resumed: bool = False,
    label: str = "",
    halt: Callable[[], str | None] = lambda: None,
) -> tuple[JobOutcome, JobRecord, str]:
    """Run the job; when it ends before its script did (a refused call can end `opencode run`, losing its whole
    batch of results), run the calls it never answered in new jobs, one call a step, so each new job answers
    all it can up to the call that ends it; that call is left out of the next. The script's checkpoints and
    conditions go with its calls (`Script.remaining`). The record holds every answer;
    the note says why each job ended, in the agent's own last words. A call still unanswered then is judged
    on its own (it never ran: INCONCLUSIVE); the early end no longer voids the answers that did come.
    A resumed job's reruns are named after it (`job-b.resumed.rerun1`), apart from its first start's.
    `halt`: why no rerun may start now (what landed breaks the agent's start), or None; halted, the early end
    stands as the job's problem."""
    label = label or (".resumed" if resumed else "")
    outcome, record = session.run(job, script, resumed=resumed, label=label)
    notes: list[str] = []
    stopped: set[str] = set()  # calls a job ended on, run alone: never run again, credited only where proven
    ran = set(record.checkpoints_done)  # the script's checkpoints (by step) that ran, in whichever job
    halted = None
    for attempt in range(1, MAX_RERUNS + 1):
        rest, due = script.remaining(lambda c: not record.settled(c) and c not in stopped, ran)
        for check in due:  # its step's calls all ended a job unanswered: look now, nothing runs
            run_checkpoint(check, record, "after an early end")
        if record.finished or not rest.steps or outcome.exit_code != 0:
            break  # a job that crashed or timed out did not end on a refusal: its problem stands
        left, halted = rest.call_ids(), halt()
        if halted:
            notes.append(f"job {job.name}'s {len(left)} unanswered calls were not run again: {halted}")
            break
        notes.append(f"job {job.name} ended with {len(left)} calls unanswered: {last_words(outcome)}")
        outcome, again = session.run(job, rest, resumed=True, label=f"{label}.rerun{attempt}")
        record.merge(again)
        ender, unproven = ended_on(left, again, outcome)
        stopped.update([ender] if ender else [])
        if ender and unproven:
            notes.append(f"call {ender} ended job {job.name}{label}.rerun{attempt} unanswered, {unproven}")
        elif ender:
            record.ended_on[ender] = last_words(outcome)
    if record.ended_on:
        notes.append(f"{len(record.ended_on)} calls each ended their job unanswered when run alone")
    if notes and not halted:
        record.finished = all(record.settled(call_id) for call_id in script.call_ids())
        session.forgive_early_end(job.name + label)
    return outcome, record, "; ".join(notes)


def ended_on(left: list[str], again: JobRecord, outcome: JobOutcome) -> tuple[str | None, str | None]:
    """The call a rerun (one call a step) ended on: the first of `left` it did not answer, or None; and why the
    rerun's last words are no answer to that call, or None when they are."""
    unanswered = [call_id for call_id in left if not again.settled(call_id)]
    if not unanswered or again.finished:
        return None, None
    why = _unproven(unanswered, again, outcome)
    return unanswered[0], f"so its last words are not that call's answer: {why}" if why else None


def _unproven(unanswered: list[str], again: JobRecord, outcome: JobOutcome) -> str | None:
    """Why a rerun's last words do not show how its first unanswered call ended: the rerun did not end cleanly
    (in time, exit 0, no error at the model server: a crash's or a teardown's words say nothing of the call), or
    that call was not the one call it issued and left unanswered."""
    if outcome.problem:
        return outcome.problem
    if again.errors:
        return f"the model server noted: {'; '.join(again.errors)}"
    issued = [call_id for call_id in unanswered if call_id in again.issued_at]
    if not issued:
        return "the call was never issued in that job"
    if issued != unanswered[:1]:
        return f"{len(issued)} issued calls were left unanswered ({', '.join(issued)}), not the first alone"
    return None
