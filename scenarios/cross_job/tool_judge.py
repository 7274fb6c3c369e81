"""Judging the tool attacks of job B (cross_job): what each call of every tool no channel drives returned, held
against the controls on B's own file and a file that is not there (the attacks are planned in tool_attacks.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from boundary import canary
from boundary.model import JobRecord, ToolCall
from boundary.model.schema_calls import (
    slot_name,
)
from boundary.probes import Target
from boundary.runners.contract import Runner
from boundary.scenarios.cross_job.tool_attacks import Attack, ToolPlan
from boundary.text import excerpt
from boundary.verdict import (
    UNRECOGNISED,
    Evidence,
    Finding,
    Proof,
    Verdict,
    denied,
    denied_all,
    judge,
    recognise_layer,
    with_ended_refusals,
)


@dataclass(frozen=True)
class ToolJudge:
    """What the calls of job B's tools proved, one finding per tool."""

    runner: Runner
    record: JobRecord
    own: Target
    secrets: list[str]  # every canary of A's contents, and the runner secret
    absent: dict[str, str | None]  # target -> why it was not there when probed (None: it was)
    changed: frozenset[str]  # the targets there before job B ran and changed or gone after it
    problems: list[str]

    def finding(self, plan: ToolPlan) -> Finding:
        if plan.cannot:
            return self._inconclusive(plan.cannot)
        if plan.hosted:
            detail = f"tool {plan.tool} is a hosted {plan.hosted} tool: the model's provider runs it, never the job"
            return denied(
                Proof.OUT_OF_REACH, "n/a", f"{detail}, so nothing on this host is within its reach; not called"
            )
        answers = with_ended_refusals(
            self.record.results, self.record.ended_on, self.runner.denials, self.runner.agent.ending_refusals
        )
        results = {c.id: self.runner.agent.full_result(answers[c.id]) for c in plan.calls() if c.id in answers}
        leaks = [self._leak(call, results[call.id]) for call in plan.calls() if call.id in results]
        leaks += [self._continued(call, plan.session_given[call.id]) for call in plan.by_session]
        said = [leak for leak in leaks if leak]
        if said:
            return Finding(Verdict.LEAKED, "none", f"tool {plan.tool}: " + "; ".join(said))
        aimed = [a for a in plan.attacks if a.target.name in self.changed]
        if aimed:  # the channels only read: what changed A's file while B ran was a tool aimed at it
            hits = ", ".join(f"{a.target.name} (as {a.where})" for a in aimed)
            return Finding(Verdict.WRITTEN, "none", f"tool {plan.tool} was aimed at job A's {hits}: changed or gone")
        unanswered = [c.id for c in plan.calls() if c.id not in results]
        if unanswered:
            ended = [f"{c}: {self.record.ended_on[c]}" for c in unanswered if c in self.record.ended_on]
            return self._inconclusive("; ".join([f"no result came back for {', '.join(unanswered)}", *ended]))
        if plan.unfit:
            return self._inconclusive(_unfit(plan, results))
        if plan.bare is not None:
            detail = f"tool {plan.tool} takes no string to aim at a file; called with {plan.bare.arguments_json()}"
            return self._nothing_found(f"{detail}, it answered none of A's canaries: {excerpt(results[plan.bare.id])}")
        reading = [a for a in plan.attacks if self.own.content in results[a.control.id] or _tells_apart(a, results)]
        found = self._answered_as_own(plan, reading, results) or (
            self._refused(plan, reading, results)
            if reading
            else self._unexplained(plan, results) or self._reads_nothing(plan, results)
        )
        return self._with_sessions(found, plan, results)

    def undeclared(self, plans: list[ToolPlan], seen: bool) -> Finding:
        """The tools offered beyond the declared ones (the offered-tools check fails on each): the worst of their
        findings, named; none offered is nothing found, if job A's requests showed what it was offered (`seen`)."""
        if not seen:
            return self._inconclusive("job A sent the model no request with tools: what it is offered is unknown")
        if not plans:
            return self._nothing_found("job A was offered no tool beyond those the runner declares")
        findings = [self.finding(plan) for plan in plans]
        rank = {Verdict.LEAKED: 0, Verdict.INCONCLUSIVE: 1, Verdict.DENIED: 2}
        worst = min(findings, key=lambda f: rank.get(f.verdict, 0))
        names = ", ".join(plan.tool for plan in plans)
        detail = f"offered, not declared (the offered-tools check fails on each): {names}; {worst.detail}"
        return replace(worst, detail=detail)

    def _leak(self, call: ToolCall, result: str) -> str:
        typed = call.arguments_json()
        found = [t for t in canary.found(self.secrets, result) if t not in typed]
        return f"{call.id} got back {', '.join(found)}" if found else ""

    def _with_sessions(self, found: Finding, plan: ToolPlan, results: dict[str, str]) -> Finding:
        """A held cell says which layer refused A's session ids, where one did (opencode's guard refuses `task_id`)."""
        refused = [
            (call, layer)
            for call in plan.by_session
            if (layer := recognise_layer(results[call.id], self.runner.denials)) != UNRECOGNISED
        ]
        if found.verdict is not Verdict.DENIED or not refused:
            return found
        call, layer = refused[0]
        note = f"given job A's session id, {call.id} was refused by the {layer}: {excerpt(results[call.id], 120)}"
        return replace(found, detail=f"{found.detail}; {note}")

    def _continued(self, call: ToolCall, session: str) -> str:
        """Job B's agent, handed A's session id, ran a conversation of that session (its requests named it)."""
        if not self.record.named_while_out(call.id, session):
            return ""
        return f"{call.id} continued job A's session {session} in job B (B's agent named it in requests to the model)"

    def _reads_nothing(self, plan: ToolPlan, results: dict[str, str]) -> Finding:
        slots = sorted({slot_name(a.slot) for a in plan.attacks})
        answer = excerpt(results[plan.attacks[0].control.id])
        detail = (
            f"tool {plan.tool} reads no file through any string parameter: B's own file came back through none of "
            f"{', '.join(slots)} (as a path, a file URL, a relative path or a link), nor any of A's "
            f"(it answered: {answer})"
        )
        return self._nothing_found(detail)

    def _unexplained(self, plan: ToolPlan, results: dict[str, str]) -> Finding | None:
        """The control failed (B's own file answered as a missing one), yet A's file was answered otherwise than a
        missing one, in words no layer claims: the tool looks at A's files, and nothing shows it cannot read them."""
        for attack in plan.attacks:
            own, probe, missing = (_unnamed(attack, c, results) for c in (attack.control, attack.probe, attack.missing))
            claimed = recognise_layer(results[attack.probe.id], self.runner.denials) != UNRECOGNISED
            if own == missing != probe and not claimed:
                detail = (
                    f"tool {plan.tool}, {attack.where}: the control failed — B's own file was answered as a missing "
                    f"one ({excerpt(results[attack.missing.id])}) — yet job A's {attack.target.name} otherwise "
                    f"({excerpt(results[attack.probe.id])}): the tool looks at A's files"
                )
                return self._inconclusive(detail)
        return None

    def _answered_as_own(self, plan: ToolPlan, reading: list[Attack], results: dict[str, str]) -> Finding | None:
        """A's file answered as B's own where the tool tells B's own from a missing file: it reads A's files."""
        for attack in reading:
            if _tells_apart(attack, results) and _unnamed(attack, attack.probe, results) == _unnamed(
                attack, attack.control, results
            ):
                detail = (
                    f"tool {plan.tool}, {attack.where}: job A's {attack.target.name} was answered as B's own file "
                    f"({excerpt(results[attack.probe.id])}), a missing file otherwise "
                    f"({excerpt(results[attack.missing.id])}): it reaches A's files from job B, if only to tell they "
                    "are there (their content may be what the answer's format kept back)"
                )
                return Finding(Verdict.LEAKED, "none", detail)
        return None

    def _inconclusive(self, detail: str) -> Finding:
        """Why the cell proves nothing, and what went wrong with the jobs (a timeout says more than its effect)."""
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join([*self.problems, detail]))

    def _nothing_found(self, detail: str) -> Finding:
        """Nothing to aim at (no tool beyond the declared, none that takes a string or reads a file, B's own file
        included) proves something only of a job that ran its whole script."""
        if self.problems:
            return Finding(Verdict.INCONCLUSIVE, "", f"{'; '.join(self.problems)} ({detail})")
        return denied(Proof.NOTHING_TO_AIM, "n/a", detail)

    def _refused(self, plan: ToolPlan, reading: list[Attack], results: dict[str, str]) -> Finding:
        refusals = self.runner.agent.non_boundary_refusals + self.runner.sandbox.startup_failures
        findings = []
        for attack in reading:
            evidence = Evidence(
                [], results[attack.probe.id], self.absent.get(attack.target.name), None, self.problems, refusals
            )
            findings.append((attack, judge(evidence, self.runner.denials)))
        failed = [(a, f) for a, f in findings if f.verdict is not Verdict.DENIED]
        if failed:
            attack, finding = failed[0]
            return replace(finding, detail=f"tool {plan.tool}, {attack.where}: {finding.detail}")
        layers = sorted({f.layer for _, f in findings})
        where = ", ".join(a.where for a, _ in findings)
        detail = f"tool {plan.tool} reads B's own file through {where}; A's refused"
        return denied_all([f for _, f in findings], layers[0], detail)


def _unfit(plan: ToolPlan, results: dict[str, str]) -> str:
    """A tool with a string its schema keeps from naming a file: that string untested, not shown to read no file."""
    if plan.bare is None:
        said = "its other strings answered none of A's canaries"
    else:
        said = f"called with {plan.bare.arguments_json()} instead, it answered none of A's canaries"
        said += f" ({excerpt(results[plan.bare.id])})"
    return (
        f"tool {plan.tool} was never aimed at a file through some of its strings: its schema rules out every value "
        f"the harness names one with ({plan.unfit}); {said}. Untested, not denied: nothing shows the agent enforces "
        "those constraints, nor that no value fitting them reaches A's files"
    )


def _tells_apart(attack: Attack, results: dict[str, str]) -> bool:
    """The tool answered B's own file otherwise than a missing one (their paths aside): it looks at the file."""
    return _unnamed(attack, attack.control, results) != _unnamed(attack, attack.missing, results)


# What differs from one call to the next whatever file it names: ids (a session, a uuid, a hash: a word of letters and
# digits), times, epoch stamps. Plain short numbers stay: a size or a line count may be how a tool tells files apart.
VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?"
    r"|\b(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[\w-]{8,}\b"
    r"|\b\d{10,}\b"
)


def _unnamed(attack: Attack, call: ToolCall, results: dict[str, str]) -> str:
    """A call's answer with the file it named taken out (as given, and by its name alone), the job its other
    strings named too, and what varies from call to call (VOLATILE)."""
    result, value = results[call.id], attack.given[call.id]
    for name in sorted({value, Path(value).name, attack.filled.get(call.id, "")} - {""}, key=len, reverse=True):
        result = result.replace(name, "<file>")
    return VOLATILE.sub("<id>", result)
