"""The cross-job scenario: job B of the same account and repository tries to read job A's data.

Job A runs a real shell command whose output opencode saves; the harness
plants more targets in A's data dir, checkout and the account database,
each with its own canary (`boundary.scenarios.common`). Job B then uses every
channel, first on its own file (the control), then on each target, all in one
agent session.
"""

from __future__ import annotations

from dataclasses import replace

from boundary.jobs.job import JobOutcome
from boundary.jobs.session import Session
from boundary.model import JobRecord, Script
from boundary.probes import Probe, Target, matrix_for, targets_for
from boundary.results import ProbeResult
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import JOB_A, Cell, Scenario
from boundary.scenarios.common import ACCOUNT, after_job_a
from boundary.scenarios.common_oracles import CONTEXT_CELL, context_finding, job_output_findings
from boundary.scenarios.common_probes import judge_probes, own_file, plan_probes
from boundary.scenarios.cross_job.tool_attacks import (
    CHANNEL,
    UNDECLARED_CELL,
    JobNames,
    cell_target,
    plan_tools,
    schema_tools,
    tool_cells,
    undeclared_tools,
)
from boundary.scenarios.cross_job.tool_judge import ToolJudge
from boundary.scenarios.probe_batches import batched
from boundary.verdict import Finding, Verdict
from boundary.writes.state import FileState, changed, state


class CrossJob(Scenario):
    """Job B of the same account and repository tries every read channel on job A's data."""

    name = "cross_job"
    title = "job B reads job A's saved output, shell capture, checkout and account database"
    checks_layers = True

    def plan(self, runner: Runner) -> list[Cell]:
        agent = runner.agent
        outputs = ((target, "job_output") for target in targets_for(agent))
        return [*matrix_for(agent), *outputs, *tool_cells(runner), CONTEXT_CELL]

    def run(self, runner: Runner, session: Session) -> list[ProbeResult]:
        return after_job_a(runner, session, lambda _, job_b, targets: self._run_job_b(runner, session, job_b, targets))

    def _run_job_b(self, runner: Runner, session: Session, job: Job, targets: list[Target]) -> list[ProbeResult]:
        controls, probes = plan_probes(runner, job, targets)
        # Where the runner says it keeps the secret, and wherever else it is found: a key in a file it does not name
        # (an auth.json written at setup, an .env) is attacked as well.
        found = session.secret.homes(session.state, job, session.written_since_setup(), session.root())
        kept = dict.fromkeys([*runner.credentials(), *found])
        secret = [Target("runner_secret", path, session.secret.token) for path in kept]
        _, secret_probes = plan_probes(runner, job, secret, prefix="secret-")  # judged by the secret's oracle
        calls = batched(runner.agent, controls, probes + secret_probes, home=job.checkout)
        script = Script()
        calls.add_to(script, runner.agent)
        own, schemas, ids = own_file(job), session.schemas_offered(JOB_A), session.session_ids_of(JOB_A)
        names = JobNames(own=job.name, theirs=JOB_A)
        tools = plan_tools(schema_tools(runner), schemas, own, targets, job.checkout, ids, names)
        extra = plan_tools(undeclared_tools(runner, schemas), schemas, own, targets, job.checkout, ids, names)
        script.add_calls([call for plan in tools + extra for call in plan.calls()], runner.agent.serial_tools)
        before, looked = {t.name: t.presence() for t in targets}, snapshots(targets)
        _, record, note = self.run_job_b(runner, session, job, script)
        after = {t.name: t.presence() for t in targets}
        absent = {t.name: before[t.name] or after[t.name] for t in targets}  # there before and after, or why not
        gone = {name for name, why in after.items() if why and not before[name]}
        altered = frozenset(gone | rewritten(targets, looked))
        problems = session.problems_of(job.name)
        findings = [
            (cell, _ended_on(finding, probe, record), duration)
            for probe, (cell, finding, duration) in zip(
                probes, judge_probes(runner, controls, probes, record, absent, problems, calls), strict=True
            )
        ]
        results = [self.result(runner, cell, finding, duration) for cell, finding, duration in findings]
        output = job_output_findings(session.transcripts_of(job.name), job, targets, problems)
        noted = [(target, replace(f, detail=f"{f.detail}; {note}") if note else f) for target, f in output]
        context = context_finding(record, targets, script, problems)
        outputs = [self.result(runner, (target, "job_output"), f) for target, f in noted]
        secrets = [t.content for t in targets] + [session.secret.token]
        tool_judge = ToolJudge(runner, record, own, secrets, absent, altered, problems)
        driven = [self.result(runner, (cell_target(p.tool), CHANNEL), tool_judge.finding(p)) for p in tools]
        driven.append(self.result(runner, UNDECLARED_CELL, tool_judge.undeclared(extra, seen=bool(schemas))))
        return [*results, *outputs, *driven, self.result(runner, CONTEXT_CELL, context)]

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


def snapshots(targets: list[Target]) -> dict[str, FileState | None]:
    """Each target as it is before job B runs, but the account's database: every job's agent writes it."""
    return {t.name: state(t.path) for t in targets if t.name != ACCOUNT}


def rewritten(targets: list[Target], looked: dict[str, FileState | None]) -> set[str]:
    """The targets whose file changed while job B ran though it kept its canary (a tool that appends to it): the
    channels only read, so it was a tool aimed at it."""
    paths = {t.name: t.path for t in targets}
    return {name for name, seen in looked.items() if changed(seen, state(paths[name]))}
