"""Read probes several scenarios run from job B: a control per channel on B's own file, then every channel on
every target it applies to, each judged by the verdict rule (`boundary.verdict.judge`)."""

from __future__ import annotations

import os
from pathlib import Path

from boundary import canary
from boundary.model import JobRecord
from boundary.probes import CHANNELS, Channel, Probe, Target, channels_for, make_probe
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import Cell
from boundary.scenarios.probe_batches import ProbeCalls
from boundary.verdict import BroadDenialText, Evidence, Finding, broad_denial, judge, with_ended_refusals


def plan_probes(
    runner: Runner, job: Job, targets: list[Target], channels: list[Channel] = CHANNELS, prefix: str = ""
) -> tuple[list[Probe], list[Probe]]:
    """A control per channel on the job's own file, then every channel on every target it applies to."""
    own = own_file(job)
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


def own_file(job: Job) -> Target:
    """A file of the job's own in its checkout, with a canary: what a control reads."""
    name = canary.new_canary()
    own = Target("own_file", job.checkout / f"own-{name}.txt", canary.new_canary(), name)
    own.path.write_text(f"{own.content}\n")
    return own


def judge_probes(
    runner: Runner,
    controls: list[Probe],
    probes: list[Probe],
    record: JobRecord,
    absent: dict[str, str | None],
    problems: list[str],
    calls: ProbeCalls | None = None,
) -> list[tuple[Cell, Finding, float | None]]:
    """One finding per probe, in order, with how long its call took; a failed control (asked alone, or on its line
    of a batch) makes its channel's probes INCONCLUSIVE. `calls`: how they were asked, when some in batches."""
    calls = calls or ProbeCalls(controls, probes)
    answers = with_ended_refusals(record.results, record.ended_on, runner.denials, runner.agent.ending_refusals)
    results_of = {call_id: runner.agent.full_result(text) for call_id, text in answers.items()}
    control_of = {p.channel.name: calls.control_problem(p, results_of) for p in controls}
    for passed in (c for c in controls if control_of[c.channel.name] is None):
        for answer in calls.control_answers(passed, results_of):
            loud = broad_denial(answer, runner.denials, f"the answer of {passed.channel.name}'s control")
            if loud:
                raise BroadDenialText(loud)
    refusals = runner.agent.non_boundary_refusals + runner.sandbox.startup_failures
    results = []
    for probe in probes:
        result, carrier = calls.answer(probe, results_of)
        control = control_of[probe.channel.name]
        evidence = Evidence(probe.leaked(result), result, absent[probe.target.name], control, problems, refusals)
        finding = judge(evidence, runner.denials)
        cell = (probe.target.name, probe.channel.name)
        results.append((cell, finding, record.call_duration_s(carrier)))
    return results


def _via(channel: str, target: Target, job: Job) -> Path:
    """The path a channel names: for read_symlink, a link in the job's own checkout (as a repository may carry)."""
    if channel == "read_relative":
        return Path(os.path.relpath(target.path, job.checkout))
    if channel != "read_symlink":
        return target.path
    link = job.checkout / "links" / f"{target.name}-{canary.new_canary()}"
    link.parent.mkdir(exist_ok=True)
    link.symlink_to(job.view.inward(str(target.path)))  # followed inside the job: where the job sees the target
    return link
