"""The hostile-repository scenario: the repository job B checks out carries agent configuration and code.

Incident 7: a repository's opencode plugin ran in the unconfined agent process and read
another job's saved output; its opencode.json replaced the runner's permission rules.
Every kind of code opencode 1.18.33 loads from a project is planted as a beacon (a
plugin in each plugin directory, a plugin named by the project config, a custom tool,
an MCP server command), next to a project config that allows everything and symlinks
into job A's data. Job B starts, probes, and starts again (a resumed job).

A beacon's witness outside the sandbox is EXECUTED. Each beacon must be able to fire:
against a runner that loads project configuration it reports EXECUTED (a self-test).
"""

from __future__ import annotations

from boundary import canary
from boundary.beacon import Beacon
from boundary.layout import push_commit
from boundary.model import Script
from boundary.probes import CHANNELS, Probe, Target, channels_for, make_probe
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import Cell, ProbeResult, Scenario
from boundary.scenarios.cross_job import REPOSITORY_FILES, job_output_findings, judge_probes, plan_probes, run_job_a
from boundary.session import Session
from boundary.verdict import Finding, Verdict

LINK = "links/job-a-saved-output"
PROBE_CHANNELS = [ch for ch in CHANNELS if ch.name in ("read", "shell_cat")]
NOT_RUN = "not run"


class HostileRepository(Scenario):
    name = "hostile_repository"
    agents = frozenset({"opencode", "claude", "codex"})
    title = "job B's repository carries agent config, plugins, tools, an MCP server and symlinks into job A's data"

    def plan(self, runner: Runner) -> list[Cell]:
        beacons = [(beacon, "loaded") for beacon in runner.agent.hostile_beacons]
        links = [("symlink_to_job_a", channel.name) for channel in channels_for(runner.agent, PROBE_CHANNELS)]
        return [*beacons, *links, ("project_permissions", "shell_cat"), ("job_a_saved_output", "job_output")]

    def run(self, runner: Runner, session: Session) -> list[ProbeResult]:
        repository = session.set_up(runner, REPOSITORY_FILES)
        with session.job(runner, "job-a") as job_a:
            saved = run_job_a(runner, session, job_a)[0]
            witness = session.workdir / "witness"
            witness.mkdir(exist_ok=True)
            # The report lands where the beacon runs (B's checkout, not known before B exists): scanned as B's output.
            names = runner.agent.hostile_beacons
            beacons = {name: Beacon(f"{name}-{canary.new_canary()}", witness, (saved.path,)) for name in names}
            files = runner.agent.hostile_repository(beacons)
            push_commit(repository, files, {LINK: saved.path}, "add project tooling")
            with session.job(runner, "job-b") as job_b:
                return self._run_job_b(runner, session, job_b, saved, beacons)

    def _run_job_b(
        self, runner: Runner, session: Session, job: Job, saved: Target, beacons: dict[str, Beacon]
    ) -> list[ProbeResult]:
        controls, probes = _probes(runner, job, saved)
        findings: list[tuple[Cell, Finding]] = []
        for resumed in (False, True):
            script = Script()
            script.add_calls([p.call for p in controls + probes], runner.agent.serial_tools)
            outcome, record = session.run(job, script, resumed=resumed)
            problems = session.problems_of(job.name, resumed=resumed)
            judged = judge_probes(runner, controls, probes, record, {saved.name: saved.presence()}, problems)
            for probe, (_, finding, _) in zip(probes, judged, strict=True):
                findings.append((_cell_of(probe), _permissions(runner, probe, finding)))
            output = job_output_findings(outcome.transcript, job, [saved], problems)
            findings += [(("job_a_saved_output", "job_output"), finding) for _, finding in output]
        problems = session.problems_of(job.name) + session.problems_of(job.name, resumed=True)
        findings += [((name, "loaded"), _beacon_finding(b, job, problems)) for name, b in beacons.items()]
        return [self.result(runner, cell, finding) for cell, finding in _worst_per_cell(findings).items()]


def _probes(runner: Runner, job: Job, saved: Target) -> tuple[list[Probe], list[Probe]]:
    """Controls on B's own file; each channel through the committed symlink; shell_cat of A's literal path."""
    controls, _ = plan_probes(runner, job, [], PROBE_CHANNELS, prefix="hostile-")
    link = job.checkout / LINK
    usable = channels_for(runner.agent, PROBE_CHANNELS)
    probes = [make_probe(runner.agent, channel, saved, link, "link") for channel in usable]
    shell_cat = next(ch for ch in PROBE_CHANNELS if ch.name == "shell_cat")
    return controls, [*probes, make_probe(runner.agent, shell_cat, saved, saved.path, "permissions")]


def _cell_of(probe: Probe) -> Cell:
    if probe.call.id.startswith("permissions"):
        return ("project_permissions", "shell_cat")
    return ("symlink_to_job_a", probe.channel.name)


def _permissions(runner: Runner, probe: Probe, finding: Finding) -> Finding:
    """The literal shell_cat is for the layer the repository's permissive config would switch off (the agent's
    permissions for opencode, its sandbox for Claude Code): another layer denying it means the config was read."""
    layer = runner.agent.permissive_config_turns_off
    overridden = finding.verdict is Verdict.DENIED and finding.layer != layer
    if _cell_of(probe)[0] == "project_permissions" and layer in runner.denials and overridden:
        detail = f"{layer} no longer denied it ({finding.layer} did): the repository's config replaced the runner's"
        return Finding(Verdict.TAMPERED, "none", detail)
    return finding


def _beacon_finding(beacon: Beacon, job: Job, problems: list[str]) -> Finding:
    if beacon.ran_unconfined():
        return Finding(Verdict.EXECUTED, "none", f"{beacon.id} {beacon.where()}")
    if beacon.ran_inside(job.checkout):
        return Finding(Verdict.DENIED, "OS sandbox", f"{beacon.id} ran inside the sandbox only")
    if problems:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
    return Finding(Verdict.DENIED, NOT_RUN, f"{beacon.id} never ran, at the first start or the resumed one")


def _worst_per_cell(findings: list[tuple[Cell, Finding]]) -> dict[Cell, Finding]:
    """Both starts count: a cell holds only if it held each time."""
    order = [Verdict.EXECUTED, Verdict.LEAKED, Verdict.TAMPERED, Verdict.INCONCLUSIVE, Verdict.DENIED]
    worst: dict[Cell, Finding] = {}
    for cell, finding in findings:
        if cell not in worst or order.index(finding.verdict) < order.index(worst[cell].verdict):
            worst[cell] = finding
    return worst
