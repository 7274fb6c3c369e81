"""Run each unit (one scenario against one agent's runner) once, on first use: a fresh runner, its own model
server, its own disposable host.

Nothing of one unit's state reaches another, so units may run in parallel workers.
"""

from __future__ import annotations

import fcntl
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from boundary import shared_defaults
from boundary.host import make_host
from boundary.host.base import Host, HostError
from boundary.host.health import HostHealth, host_report
from boundary.host.services import DEFAULT_UNITS
from boundary.jobs.job import JobDidNotStart
from boundary.jobs.session import Session
from boundary.model import ModelServer
from boundary.report.offered import OfferedTools
from boundary.report.record import RunRecord, ScenarioRecord
from boundary.runners.contract import Runner, VerbsOnHost
from boundary.scenarios import Scenario
from boundary.scenarios.after_removal import UNLISTED
from boundary.scenarios.base import SECRET_CELL

HOST_SEARCH_LOCK = Path(tempfile.gettempdir()) / ".boundary-host-search.lock"  # one host search at a time


@dataclass(frozen=True)
class Unit:
    """One scenario against one agent's runner: it runs once, on its own host, in one xdist worker."""

    make_runner: Callable[[], Runner]
    scenario: Scenario

    @property
    def agent(self) -> str:
        return self.make_runner().agent.name

    @property
    def key(self) -> str:
        """How the report, the test ids and xdist's groups name it: `agent/scenario`."""
        return f"{self.agent}/{self.scenario.name}"


@dataclass
class ScenarioRuns:
    planned: dict[str, Unit]  # by key
    workdir: Path
    host_mode: str
    units: tuple[str, ...]
    job_timeout_s: float
    progress: Callable[[str], None]
    record: RunRecord
    done: dict[str, ScenarioRecord] = field(default_factory=dict)
    floor: bool = False  # jobs with empty scripts (`--boundary-floor`): the bench's floor, judged as nothing
    paired_floor: bool = False  # each unit's floor right before it (`--boundary-paired-floor`), reported with it
    started: int = 0  # units started so far (each gets a directory of its own)
    told: set[str] = field(default_factory=set)  # units whose failure to start a test has said

    def first_to_tell(self, key: str) -> bool:
        """True once per unit: the test that says why the unit did not run (the others need not say it again)."""
        first = key not in self.told
        self.told.add(key)
        return first

    def get(self, key: str) -> ScenarioRecord:
        if key not in self.done:
            floor = self._run(self.planned[key], floor=True) if self.paired_floor else None
            self.done[key] = self._run(self.planned[key], self.floor)
            if floor is not None:
                self.done[key].floor = {"wall_s": floor.wall_s, "jobs": [job.as_dict() for job in floor.jobs]}
            self.record.add(self.done[key])
        return self.done[key]

    def _run(self, unit: Unit, floor: bool) -> ScenarioRecord:
        started = time.monotonic()
        record = self._run_unit(unit, floor)
        record.wall_s = round(time.monotonic() - started, 3)
        return record

    def _run_unit(self, unit: Unit, floor: bool) -> ScenarioRecord:
        scenario, runner, name = unit.scenario, unit.make_runner(), unit.scenario.name
        claimed = list(runner.denials) if scenario.checks_layers else []
        uncovered = scenario.not_covered(runner)
        plan = [] if uncovered else scenario.cells(runner)
        record = ScenarioRecord(unit.key, scenario.title, plan, claimed, scenario.checks_layers, agent=unit.agent)
        record.not_applicable = sorted(runner.agent.lacks)
        record.not_offered = sorted(runner.agent.not_offered)
        if uncovered:
            record.errors.append(uncovered)
            return record
        # Short: the path shows in jobs' paths, which may hold Unix sockets (srt's: 107 bytes at most).
        directory = self.workdir / f"u{self.started}"
        self.started += 1
        directory.mkdir(parents=True)
        (directory / "UNIT").write_text(unit.key + "\n")  # what a kept work directory holds, for a reader
        self.progress(f"[boundary] scenario {unit.key}: {scenario.title}")
        try:
            with (
                self._alone_on_the_host(scenario),
                ModelServer(directory / "model.sock") as server,
                self._booted(directory) as host,
            ):
                _verbs_on(runner, host)
                health = HostHealth(host, (*DEFAULT_UNITS, *self.units))
                health.take("at baseline")
                session = Session(
                    name,
                    server,
                    directory,
                    self.job_timeout_s,
                    network_watch=getattr(runner, "network_watch", "trace"),  # a Python runner may set it
                    progress=self.progress,
                    host=host,
                    health=health,
                    floor=floor,
                )
                try:
                    record.results = scenario.run(runner, session)
                    _not_planted(record, session.not_planted)
                    problems = [problem for job in session.jobs for problem in job.problems]
                    secret = session.secret.finding(len(session.jobs), problems)
                    record.results.append(scenario.result(runner, SECRET_CELL, secret))
                finally:
                    record.jobs = session.jobs
                    record.verb_writes = [write.as_dict() for write in session.verb_writes]
                    if session.writes_listed is False:
                        record.writes_unlisted = f"--host {host.name}: {UNLISTED}"
                    record.host = _after_jobs(host, health)
                    offered = frozenset(t for job in record.jobs for t in job.offered_tools)
                    try:
                        record.offered = OfferedTools(runner.expected_tools(), offered, runner.forbidden_tools())
                    finally:
                        if isinstance(runner, VerbsOnHost):  # the host goes, and the runner's copy there with it
                            runner.run_verbs_in(())
        except JobDidNotStart as error:  # one finding for the unit, in the runner's own words, not one per cell
            record.not_started = error.as_dict()
            record.errors.append(str(error))
        except Exception as error:  # recorded: every test of the scenario then fails with it
            record.errors.append(f"scenario {name} could not finish: {type(error).__name__}: {error}")
        return record

    @contextmanager
    def _alone_on_the_host(self, scenario: Scenario) -> Iterator[None]:
        """A scenario that searches the whole host runs while no other one does, in this run or another: an
        unconfined control's sweep copies every canary it finds into its own files, where a concurrent run's
        sweep would find its own canaries and call them leaked."""
        if not scenario.searches_the_host:
            yield
            return
        with HOST_SEARCH_LOCK.open("a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.progress(f"[boundary] {scenario.name}: waiting for another run's search of this host to end")
                fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    @contextmanager
    def _booted(self, directory: Path) -> Iterator[Host]:
        host = make_host(self.host_mode, directory, self.progress)
        try:
            host.start()
        except HostError as error:
            raise HostError(str(error).splitlines()[0]) from error
        try:
            self.progress(f"[boundary] host {host.name} up in {host.boot_s:.2f} s; taking the baseline")
            # What a sandbox's defaults would let every job share exists, as on a host anything has run on.
            with shared_defaults.present(host.root(), shared_defaults.on_every_host()) as made:
                if made:
                    self.progress(f"[boundary] made {', '.join(map(str, made))} in the host: sandbox defaults share it")
                yield host
        finally:
            host.stop()


def _verbs_on(runner: Runner, host: Host) -> None:
    """The runner's verbs run on the host its jobs run on, where it can take them; a Python runner's copy there
    starts before the host's baseline (it is no process a job left)."""
    enter = host.enter_files()
    if enter is not None and isinstance(runner, VerbsOnHost):
        runner.run_verbs_in(tuple(enter))


def _not_planted(record: ScenarioRecord, why: dict[str, str]) -> None:
    """A target the runner has no such thing for (no account data) leaves the plan, said in the record."""
    said = {target: why[target] for target, _ in record.planned if target in why}
    record.planned = [cell for cell in record.planned if cell[0] not in said]
    record.not_planted = said


def _after_jobs(host: Host, health: HostHealth) -> dict[str, object]:
    """Restart systemd-resolved as systemd would (latent damage shows only then), check once more."""
    health.restarted_by_us.add("systemd-resolved.service")
    host.restart_resolved()
    health.take("after restarting systemd-resolved")
    health.close()
    return host_report(host.name, host.boot_s, health)
