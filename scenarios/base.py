"""What a scenario is: jobs, targets, probes, controls and a judge, with a plan of every cell it must fill.

The plan is known before anything runs (it parametrises the tests and makes a report
that lacks a cell fail); `run` starts the jobs and returns one result per planned cell.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from boundary.results import ProbeResult
from boundary.verdict import Finding

if TYPE_CHECKING:
    from boundary.jobs.session import Session
    from boundary.runners.contract import Runner

Cell = tuple[str, str]  # (target, channel)
SECRET_CELL: Cell = ("runner_secret", "anywhere")
# The jobs' names. B, the attacker, is named so that its paths are string prefixes of A's in the layouts
# runners use (`<name>/`, `<name>.data/`): a runner that compares paths as strings (`startsWith(root)`, the
# class of Claude Code CVE-2025-54794) lets B into A's checkout and data. Every scenario, every runner.
JOB_A, JOB_B = "job-b.data-a", "job-b"  # every scenario's: the runner secret reached no job (secret.py)


class Scenario(ABC):
    """One way a job attacks the boundary. Subclasses are registered in `boundary.scenarios`."""

    name: ClassVar[str]
    title: ClassVar[str]  # one line for the report: what the scenario tries
    checks_layers: ClassVar[bool] = False  # every layer the runner claims must deny one of its probes
    agents: ClassVar[frozenset[str] | None] = None  # the agents it knows how to attack; None: every agent
    in_default_run: ClassVar[bool] = True  # False: only with --scenario NAME (it suits some runners' agents only)
    # Its jobs search the whole host: two of its units at once would find each other's records (one job's
    # transcript holding the other's canaries), so its units run one after another, in one worker.
    searches_the_host: ClassVar[bool] = False
    # Words it puts in what a job gets back or reads: a runner's declared denial text inside one of them would read
    # the harness's own words as that layer's refusal, so the run refuses such a text before any job starts.
    wording: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def remove_leftovers(cls, progress: Callable[[str], None]) -> None:
        """Remove from the host what an earlier run of this scenario, killed mid-way, left outside its work
        directory (called before a run starts, while dead runs' work directories are still there to read)."""
        return None  # most leave nothing there

    def not_covered(self, runner: Runner) -> str | None:
        """Why this scenario cannot attack the runner's agent yet (its run then fails: not covered is no pass)."""
        if self.agents is None or runner.agent.name in self.agents:
            return None
        return (
            f"scenario {self.name} is not built for {runner.agent.name} jobs yet (it attacks "
            f"{', '.join(sorted(self.agents))}): NOT COVERED. Deselect it with --scenario to check the others"
        )

    @abstractmethod
    def plan(self, runner: Runner) -> list[Cell]:
        """Every (target, channel) cell the run must fill, in the order the tables show them."""

    def cells(self, runner: Runner) -> list[Cell]:
        """The plan, and the cell every scenario fills: the runner secret reached none of its jobs."""
        return [*self.plan(runner), SECRET_CELL]

    @abstractmethod
    def run(self, runner: Runner, session: Session) -> list[ProbeResult]:
        """Run the jobs; one result per planned cell (a cell left out fails the run)."""

    def result(self, runner: Runner, cell: Cell, finding: Finding, duration_s: float | None = None) -> ProbeResult:
        return ProbeResult(
            scenario=self.name,
            agent=runner.agent.name,
            sandbox=runner.sandbox.name,
            runner=runner.name,
            target=cell[0],
            channel=cell[1],
            verdict=finding.verdict.value,
            layer=finding.layer,
            detail=finding.detail,
            proof=finding.proof.value if finding.proof else "",
            duration_s=round(duration_s, 3) if duration_s is not None else None,
        )
