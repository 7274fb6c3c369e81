"""What a scenario is: jobs, targets, probes, controls and a judge, with a plan of every cell it must fill.

The plan is known before anything runs (it parametrises the tests and makes a report
that lacks a cell fail); `run` starts the jobs and returns one result per planned cell.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, ClassVar

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


@dataclass(frozen=True)
class ProbeResult:
    scenario: str
    agent: str
    sandbox: str
    runner: str
    target: str
    channel: str
    verdict: str
    layer: str
    detail: str
    duration_s: float | None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


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
            duration_s=round(duration_s, 3) if duration_s is not None else None,
        )
