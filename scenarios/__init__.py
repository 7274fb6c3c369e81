"""The scenario registry: every way `boundary` attacks a runner, by name (`--scenario NAME`).

Built-in scenarios are listed here; another package adds its own through a `boundary.scenarios` entry
point (name = the scenario's `name`, value = `module:Class`), and `--scenario module:Class` loads one
by path. Every one obeys the same plan/run/judge rules and fills the same report.
May import jobs, writes, reach, report and the layers below; never suite.
"""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import entry_points

from boundary.results import ProbeResult
from boundary.scenarios.after_removal import AfterRemoval
from boundary.scenarios.base import Cell, Scenario
from boundary.scenarios.cross_job.scenario import CrossJob
from boundary.scenarios.cross_job_writes import CrossJobWrites
from boundary.scenarios.escalation.scenario import Escalation
from boundary.scenarios.hostile_repository import HostileRepository
from boundary.scenarios.reach.scenario import Reach
from boundary.scenarios.sessions.scenario import Sessions
from boundary.scenarios.sweep.scenario import Sweep
from boundary.scenarios.tamper.scenario import Tamper
from boundary.scenarios.terminal.scenario import Terminal

ENTRY_POINTS = "boundary.scenarios"
BUILT_IN: dict[str, type[Scenario]] = {
    s.name: s
    for s in (
        CrossJob,
        CrossJobWrites,
        Tamper,
        HostileRepository,
        Sweep,
        AfterRemoval,
        Terminal,
        Reach,
        Sessions,
        Escalation,
    )
}

__all__ = ["BUILT_IN", "Cell", "ProbeResult", "Scenario", "get_scenario", "registry"]


@functools.cache
def registry() -> dict[str, type[Scenario]]:
    """Built-in scenarios, then those installed packages register; a name taken twice is an error."""
    found = dict(BUILT_IN)
    for entry in entry_points(group=ENTRY_POINTS):
        kind = load(entry.value, f"entry point {entry.name!r} ({entry.dist.name if entry.dist else '?'})")
        if kind.name != entry.name:
            raise ValueError(f"entry point {entry.name!r} loads scenario {kind.name!r}: the names must agree")
        if entry.name in found and found[entry.name] is not kind:
            raise ValueError(f"scenario {entry.name!r} is registered twice: by boundary and by {entry.value}")
        found[entry.name] = kind
    return found


def load(spec: str, what: str) -> type[Scenario]:
    """`module:Class`, checked to be a Scenario."""
    module_name, _, attr = spec.partition(":")
    try:
        kind = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as error:
        raise ValueError(f"{what}: cannot load {spec!r} (expected module:Class): {error}") from error
    if not (isinstance(kind, type) and issubclass(kind, Scenario)):
        raise ValueError(f"{what}: {spec} is not a boundary.scenarios.Scenario subclass")
    return kind


def get_scenario(name: str) -> Scenario:
    """A registered scenario by name, or one outside the registry as `module:Class`."""
    if ":" in name:
        return load(name, f"--scenario {name}")()
    try:
        return registry()[name]()
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; expected one of: {', '.join(registry())}") from None
