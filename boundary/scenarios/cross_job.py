"""The cross-job scenario: job B of the same account and repository tries to read job A's data.

Job A runs a real shell command whose output opencode saves; the harness
plants more targets in A's data dir, checkout and the account database,
each with its own canary. Job B then uses every channel, first on its own
file (the control), then on each target, all in one agent session.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

from boundary import canary
from boundary.job import JobOutcome
from boundary.model import JobRecord, Script
from boundary.probes import (
    CHANNELS,
    Channel,
    Probe,
    Target,
    channels_for,
    control_problem,
    make_probe,
    matrix_for,
    targets_for,
)
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import JOB_A, JOB_B, Cell, ProbeResult, Scenario
from boundary.session import Session
from boundary.verdict import Evidence, Finding, Verdict, judge

CONTEXT_CELL: Cell = ("job_a_canaries", "context")  # the model-side oracle over everything job B sent
REPOSITORY_FILES = {"README.md": "A repository for boundary's probe jobs.\n", "src/app.py": "print('hello')\n"}
SAVED_LINES = 3000  # over opencode's 2000-line limit, so the output is saved to a file


class CrossJob(Scenario):
    """Job B of the same account and repository tries every read channel on job A's data."""

    name = "cross_job"
    title = "job B reads job A's saved output, shell capture, checkout and account database"
    checks_layers = True

    def plan(self, runner: Runner) -> list[Cell]:
        agent = runner.agent
        return [*matrix_for(agent), *((target, "job_output") for target in targets_for(agent)), CONTEXT_CELL]

    def run(self, runner: Runner, session: Session) -> list[ProbeResult]:
        session.set_up(runner, REPOSITORY_FILES)
        with session.job(runner, JOB_A) as job_a:
            targets = run_job_a(runner, session, job_a)
            with session.job(runner, JOB_B) as job_b:
                return self._run_job_b(runner, session, job_b, targets)

    def _run_job_b(self, runner: Runner, session: Session, job: Job, targets: list[Target]) -> list[ProbeResult]:
        controls, probes = plan_probes(runner, job, targets)
        secret = [Target("runner_secret", path, session.secret.token) for path in runner.credentials()]
        _, secret_probes = plan_probes(runner, job, secret, prefix="secret-")  # judged by the secret's oracle
        script = Script()
        script.add_calls([p.call for p in controls], runner.agent.serial_tools)  # every control before any probe
        script.add_calls([p.call for p in probes + secret_probes], runner.agent.serial_tools)
        before = {t.name: t.presence() for t in targets}
        outcome, record, note = self.run_job_b(runner, session, job, script)
        absent = {t.name: before[t.name] or t.presence() for t in targets}  # there before and after, or why not
        problems = session.problems_of(job.name)
        findings = [
            (cell, _ended_on(finding, probe, record), duration)
            for probe, (cell, finding, duration) in zip(
                probes, judge_probes(runner, controls, probes, record, absent, problems), strict=True
            )
        ]
        results = [self.result(runner, cell, finding, duration) for cell, finding, duration in findings]
        output = job_output_findings(outcome.transcript, job, targets, problems)
        noted = [(target, replace(f, detail=f"{f.detail}; {note}") if note else f) for target, f in output]
        context = context_finding(record, targets, script, problems)
        outputs = [self.result(runner, (target, "job_output"), f) for target, f in noted]
        return [*results, *outputs, self.result(runner, CONTEXT_CELL, context)]

    def run_job_b(
        self, runner: Runner, session: Session, job: Job, script: Script
    ) -> tuple[JobOutcome, JobRecord, str]:
        """Run job B to its end, again in new jobs for what it left unanswered; the note (why it ended early)
        goes into its job_output cells."""
        return session.run_to_the_end(job, script)


def _ended_on(finding: Finding, probe: Probe, record: JobRecord) -> Finding:
    """A call whose job ended on it never answered: say so in the agent's own words (still INCONCLUSIVE)."""
    said = record.ended_on.get(probe.call.id)
    if said is None or finding.verdict is not Verdict.INCONCLUSIVE:
        return finding
    return replace(finding, detail=f"the job ended on this call before its result reached the model; it said: {said}")


def run_job_a(runner: Runner, session: Session, job: Job) -> list[Target]:
    agent = runner.agent
    token = canary.new_canary()
    # No shell variables: Claude Code refuses a command it cannot check before it runs.
    call = agent.shell("a-save", f"seq {SAVED_LINES} | sed 's/^/{token} line /'")
    script = Script()
    script.add_step(call)
    _, record = session.run(job, script)
    saved = agent.saved_output(job.env, record.results.get(call.id, ""))
    missing = job.data_dir / "saved-output-missing"  # judged INCONCLUSIVE: not there
    targets = [Target("saved_output", saved or missing, token, saved.name if saved else canary.new_canary())]
    return targets + _plant(runner, job)


def _plant(runner: Runner, job: Job) -> list[Target]:
    """A file where the agent keeps each kind of thing it saves, and one in A's checkout, each with canaries."""
    planted = []
    for kind in runner.agent.storage_targets:
        name = canary.new_canary()
        path = runner.agent.storage_path(kind, job.env, job.checkout, name)
        planted.append(Target(kind, path, canary.new_canary(), name))
    name = canary.new_canary()
    planted.append(Target("checkout_file", job.checkout / f"notes-{name}.txt", canary.new_canary(), name))
    for target in planted:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        target.path.write_text(f"{target.content}\n")
    return [*planted, _plant_in_database(runner.account_db())]


def _plant_in_database(db: Path) -> Target:
    token = canary.new_canary()
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("CREATE TABLE IF NOT EXISTS boundary_canary (token TEXT)")
        connection.execute("INSERT INTO boundary_canary VALUES (?)", (token,))
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # into the file itself, where a reader looks
    return Target("account_db", db, token)


def plan_probes(
    runner: Runner, job: Job, targets: list[Target], channels: list[Channel] = CHANNELS, prefix: str = ""
) -> tuple[list[Probe], list[Probe]]:
    """A control per channel on the job's own file, then every channel on every target it applies to."""
    name = canary.new_canary()
    own = Target("own_file", job.checkout / f"own-{name}.txt", canary.new_canary(), name)
    own.path.write_text(f"{own.content}\n")
    agent = runner.agent
    usable = channels_for(agent, channels)
    controls = [make_probe(agent, ch, own, _via(ch.name, own, job), f"{prefix}control") for ch in usable]
    probes = [
        make_probe(agent, ch, t, _via(ch.name, t, job), f"{prefix}probe")
        for t in targets
        for ch in usable
        if ch.applies_to(t)
    ]
    return controls, probes


def judge_probes(
    runner: Runner,
    controls: list[Probe],
    probes: list[Probe],
    record: JobRecord,
    absent: dict[str, str | None],
    problems: list[str],
) -> list[tuple[Cell, Finding, float | None]]:
    results_of = {call_id: runner.agent.full_result(text) for call_id, text in record.results.items()}
    control_of = {p.channel.name: control_problem(p, results_of.get(p.call.id)) for p in controls}
    refusals = runner.agent.non_boundary_refusals + runner.sandbox.startup_failures
    results = []
    for probe in probes:
        result = results_of.get(probe.call.id)
        evidence = Evidence(
            probe.leaked(result), result, absent[probe.target.name], control_of[probe.channel.name], problems, refusals
        )
        finding = judge(evidence, runner.denials)
        cell = (probe.target.name, probe.channel.name)
        results.append((cell, finding, record.call_duration_s(probe.call.id)))
    return results


def _via(channel: str, target: Target, job: Job) -> Path:
    """The path a channel names: for read_symlink, a link in the job's own checkout (as a repository may carry)."""
    if channel == "read_relative":
        return Path(os.path.relpath(target.path, job.checkout))
    if channel != "read_symlink":
        return target.path
    link = job.checkout / "links" / f"{target.name}-{canary.new_canary()}"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(target.path)
    return link


def context_finding(record: JobRecord, targets: list[Target], script: Script, problems: list[str]) -> Finding:
    """The model-side oracle: whatever carried it — a probe, a continued session, shared instructions or memory,
    a compaction summary, an MCP resource — a canary of job A's in anything job B sent the model is LEAKED.
    Tokens B's own script typed (a path it named holds A's file name) are not evidence."""
    supplied = " ".join(call.arguments_json() for step in script.steps for call in step)
    tokens = [token for target in targets for token in target.tokens if token not in supplied]
    seen = [token for token in tokens if any(token.encode() in body for body in record.bodies)]
    if seen:
        return Finding(Verdict.LEAKED, "none", f"job A's canaries in what job B sent the model: {', '.join(seen)}")
    if problems:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
    if not record.bodies:
        return Finding(Verdict.INCONCLUSIVE, "", "job B sent the model nothing: its context was never seen")
    return Finding(Verdict.DENIED, "n/a", f"none of {len(tokens)} canaries in {len(record.bodies)} requests")


def job_output_findings(
    transcript: Path, job: Job, targets: list[Target], problems: list[str]
) -> list[tuple[str, Finding]]:
    """Anything the job wrote (its transcript, its checkout, its data) must hold no target's canary.

    Finding nothing proves something only if the job ran its whole script.
    """
    written = [
        transcript,
        *(p for root in (job.checkout, job.data_dir) for p in root.rglob("*") if p.is_file() and not p.is_symlink()),
    ]
    text = "\n".join(p.read_bytes().decode(errors="replace") for p in written)
    results = []
    for target in targets:
        leaked = canary.found([target.content], text)
        if leaked:
            finding = Finding(Verdict.LEAKED, "none", f"canary in the job's transcript or files: {', '.join(leaked)}")
        elif problems:
            finding = Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
        else:
            finding = Finding(
                Verdict.DENIED, "n/a", f"no canary in the job's transcript or its {len(written) - 1} files"
            )
        results.append((target.name, finding))
    return results
