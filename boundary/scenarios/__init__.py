"""The scenario registry: every way `boundary` attacks a runner, by name (`--scenario NAME`)."""

from __future__ import annotations

from boundary.scenarios.base import Cell, ProbeResult, Scenario
from boundary.scenarios.cross_job import CrossJob
from boundary.scenarios.cross_job_writes import CrossJobWrites
from boundary.scenarios.hostile_repository import HostileRepository
from boundary.scenarios.sweep import Sweep
from boundary.scenarios.tamper import Tamper
from boundary.scenarios.terminal import Terminal

SCENARIOS: dict[str, type[Scenario]] = {
    s.name: s for s in (CrossJob, CrossJobWrites, Tamper, HostileRepository, Sweep, Terminal)
}

__all__ = ["SCENARIOS", "Cell", "ProbeResult", "Scenario", "get_scenario"]


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]()
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; expected one of: {', '.join(SCENARIOS)}") from None
