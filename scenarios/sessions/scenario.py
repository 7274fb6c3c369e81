"""The sessions scenario: a runner that continues sessions must never give job B job A's session.

opencode, Claude Code and codex each keep every job's conversation, and each can take one up again:
`opencode run --continue`, `claude -p --continue`, `codex exec resume --last`. Each picks the newest session
*it can see* — opencode of the job's directory in the account's database, Claude Code of the working
directory in its config dir, codex of the working directory in CODEX_HOME — so what keeps job A's
conversation from job B is where the runner keeps sessions and which directory each job works in.

Job B runs once (its own session, with its own canary), then job A (a newer session with A's canary:
A's shell echoes it, and the model's reply says it); then job B runs again, continued with the agent's
own flag. The Runner contract has no "continue this job" yet: the scenario appends the flag to the job's
argv itself, standing for a runner that continues sessions. Judged by the model-side oracle: a canary of
A's in anything the continued job B sent the model is LEAKED; B's own canary must be there (the control:
otherwise continuing did nothing here, and the cell is INCONCLUSIVE).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from boundary import canary
from boundary.jobs.session import Session
from boundary.model import JobRecord, Script
from boundary.results import ProbeResult
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import JOB_A, JOB_B, Cell, Scenario
from boundary.scenarios.common import REPOSITORY_FILES
from boundary.scenarios.sessions.cli import AGENTS as CLI_AGENTS
from boundary.scenarios.sessions.cli import CALL as CLI_CALL
from boundary.scenarios.sessions.cli import CLI_CELL, cli_finding, cli_script
from boundary.verdict import Finding, Proof, Verdict, denied

CONTINUE_CELL: Cell = ("job_a_canaries", "continue")
PROMPT = "go"  # every agent's argv ends with it (boundary.agents)


def continued(agent: str, argv: list[str]) -> list[str]:
    """The job's argv, continuing the newest session the agent finds, as each agent's CLI spells it."""
    if agent in ("opencode", "claude"):
        return [*argv, "--continue"]  # opencode run / claude -p: a flag after the prompt is still a flag
    if agent == "codex":  # `codex exec [OPTIONS] resume --last [PROMPT]`: the exec options stay before it
        if argv[-1] != PROMPT:
            raise ValueError(f"codex argv does not end with its prompt {PROMPT!r}: {argv[-3:]}")
        return [*argv[:-1], "resume", "--last", PROMPT]
    raise ValueError(f"no continue flag known for agent {agent!r}")


def said(id: str, token: str, runner: Runner) -> Script:
    """A turn that puts `token` in the session: a shell call's arguments (and, as a rule, its output), and the
    model's own reply."""
    script = Script(final_text=f"noted {token}")
    script.add_step(runner.agent.shell(id, f"echo {token}"))
    return script


class Sessions(Scenario):
    """Job B continues its session after job A ran: it must get its own, never A's."""

    name = "sessions"
    title = "job B, continued with the agent's own flag after job A ran, is given A's session"
    agents = frozenset({"opencode", "claude", "codex"})
    # In the default run, though the Runner contract cannot ask a runner to continue a job (the scenario appends
    # the agent's own flag to the argv): a prompt-injected job that can continue a session picks the newest it sees.

    def plan(self, runner: Runner) -> list[Cell]:
        return [CONTINUE_CELL, *([CLI_CELL] if runner.agent.name in CLI_AGENTS else [])]

    def run(self, runner: Runner, session: Session) -> list[ProbeResult]:
        session.set_up(runner, REPOSITORY_FILES)
        own, theirs = canary.new_canary(), canary.new_canary()
        with session.job(runner, JOB_B) as job_b:
            _, first = session.run(job_b, said("b-own", own, runner))
            # A's runs in between: its session is the account's newest when B continues (A still exists, as a
            # job running beside B would).
            with session.job(runner, JOB_A) as job_a:
                _, a_record = session.run(job_a, said("a-own", theirs, runner))
                again = replace(job_b, argv=continued(runner.agent.name, job_b.argv))
                _, record = session.run(again, Script(final_text="done"), resumed=True, label=".continued")
                problems = [
                    *session.problems_of(job_b.name),
                    *session.problems_of(job_a.name),
                    *session.problems_of(f"{job_b.name}.continued"),
                    *_ran(first, "b-own", own, "job B's first run"),
                    *_ran(a_record, "a-own", theirs, "job A"),
                ]
                results = [self.result(runner, CONTINUE_CELL, session_finding(record, theirs, own, problems))]
                if runner.agent.name in CLI_AGENTS:
                    results.append(self._cli(runner, session, job_b, theirs, a_record, [first, record]))
                return results

    def _cli(
        self, runner: Runner, session: Session, job_b: Job, theirs: str, a: JobRecord, b_runs: list[JobRecord]
    ) -> ProbeResult:
        """Job B once more, its shell asking the agent's CLI for A's session (cli.py)."""
        theirs_ids = sorted(a.session_ids)
        script = cli_script(runner, job_b.argv, theirs_ids)
        _, record = session.run(job_b, script, resumed=True, label=".cli")
        own_ids = sorted(set().union(*(run.session_ids for run in [*b_runs, record])))
        problems = [*session.problems_of(f"{job_b.name}.cli"), *_ran(a, "a-own", theirs, "job A")]
        found = cli_finding(
            record.results.get(CLI_CALL), Path.exists, theirs, theirs_ids, own_ids, runner.denials, problems
        )
        return self.result(runner, CLI_CELL, found)


def _ran(record: JobRecord, call_id: str, token: str, what: str) -> list[str]:
    """The job's session holds its canary: its shell call (`echo CANARY`) was answered, and the agent sent that call
    back in its history (the canary in its arguments), which is what a continued job would be given. Not the
    shell's output: opencode's shell tool takes the command's exit code without waiting for its output reader, so
    a command that prints and exits at once may be answered "(no output)" (seen under gVisor's ptrace platform on a
    busy machine, about one run of this scenario in five)."""
    answer = record.results.get(call_id)
    if answer is None:
        return [f"{what}'s shell call {call_id} got no answer back to the model: its session may not hold its canary"]
    if not any(token.encode() in body for body in record.bodies):
        return [
            f"{what} never sent its canary back to the model in its history (its shell answered {answer[:200]!r}): "
            "its session may not hold it"
        ]
    return []


def session_finding(record: JobRecord, theirs: str, own: str, problems: list[str]) -> Finding:
    """The model-side oracle over the continued job B: A's canary anywhere in it is LEAKED, whatever else went
    wrong; DENIED only if B's own earlier session was continued (B's canary there) and nothing went wrong."""
    if any(theirs.encode() in body for body in record.bodies):
        return Finding(Verdict.LEAKED, "none", f"job B, continued, was given job A's session: A's canary {theirs}")
    if not record.bodies:
        return Finding(Verdict.INCONCLUSIVE, "", "the continued job B sent the model nothing: its context unseen")
    if problems:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
    if not any(own.encode() in body for body in record.bodies):
        return Finding(
            Verdict.INCONCLUSIVE,
            "",
            "continue is not in effect: the continued job B was not given its own earlier session "
            f"(its canary {own} is in none of {len(record.bodies)} requests), so not getting A's proves nothing",
        )
    return denied(
        Proof.CONTROLLED, "n/a", f"job B continued its own session; A's canary in none of {len(record.bodies)} requests"
    )
