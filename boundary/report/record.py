"""The run record: one part per scenario, built while the live suite runs, read back from its JSON file.

Every rendering reads the same report dict (`RunRecord.as_dict()`, or `load` of the JSON file), so a run split
over pytest-xdist workers is merged as dicts and rendered once.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boundary.report.passrule import Cell, Report, passed, verdict, worst_by_cell

if TYPE_CHECKING:  # for annotations only
    from boundary.report.offered import OfferedTools
    from boundary.results import JobReport, ProbeResult

SHARD_ENV = "BOUNDARY_SHARD"  # "I/N": this run is shard I of a CI matrix's N (`boundary run --shard I/N` sets it)


def shard_place(text: str) -> dict[str, int]:
    """ "2/4" as {"index": 2, "of": 4}: which shard of a CI matrix a run is, so that a merge can name a missing one."""
    found = re.fullmatch(r"(\d+)/(\d+)", text.strip(), re.ASCII)
    if not found or not 1 <= int(found[1]) <= int(found[2]):
        raise ValueError(f"expected I/N, shard I of the matrix's N shards (1 ≤ I ≤ N, e.g. 2/4); got {text!r}")
    return {"index": int(found[1]), "of": int(found[2])}


def _shard_from_environment() -> dict[str, int] | None:
    said = os.environ.get(SHARD_ENV)
    return shard_place(said) if said else None


@dataclass
class ScenarioRecord:
    name: str
    title: str
    planned: list[Cell]
    claimed_layers: list[str] = field(default_factory=list)  # layers that must each deny one of its probes
    checks_layers: bool = False  # its probes reach every layer: each claimed one must be seen denying
    results: list[ProbeResult] = field(default_factory=list)
    jobs: list[JobReport] = field(default_factory=list)
    offered: OfferedTools | None = None
    errors: list[str] = field(default_factory=list)  # what stopped the scenario before it had results
    host: dict[str, Any] | None = None  # host health (boundary.host.health.host_report)
    agent: str = ""
    not_applicable: list[str] = field(default_factory=list)  # tool kinds the agent lacks: their channels not tried
    not_offered: list[str] = field(default_factory=list)  # of those, the kinds the runner does not offer the model
    not_planted: dict[str, str] = field(default_factory=dict)  # target -> why the runner has none (its cells unplanned)
    wall_s: float | None = None  # from its start to its verdicts
    floor: dict[str, Any] | None = None  # its paired floor's wall time and jobs (`--boundary-paired-floor`)
    not_started: dict[str, object] | None = None  # its first job never asked the model (JobDidNotStart.as_dict)
    verb_writes: list[dict[str, str]] = field(default_factory=list)  # what the runner's verbs wrote on the host
    writes_unlisted: str = ""  # why the host could not list them (its verbs ran on this machine); "": it did

    def layer_counts(self) -> dict[str, int]:
        """How many probes each claimed layer denied; a claimed layer that denied none is not shown to work."""
        counts = dict.fromkeys(self.claimed_layers, 0)
        for result in self._by_cell().values():  # a cell reported twice counts once, and only if it held each time
            if result.verdict == "DENIED" and result.layer in counts:
                counts[result.layer] += 1
        return counts

    def result(self, cell: Cell) -> ProbeResult | None:
        """The cell's result; reported more than once, the worst of them (it holds only if each held)."""
        return self._by_cell().get(cell)

    def _by_cell(self) -> dict[Cell, ProbeResult]:
        return worst_by_cell(self.results, lambda r: (r.target, r.channel), lambda r: r.verdict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "agent": self.agent,
            "not_applicable": self.not_applicable,
            "not_offered": self.not_offered,
            "not_planted": self.not_planted,
            "planned": [list(cell) for cell in self.planned],
            "results": [r.as_dict() for r in self.results],
            "jobs": [j.as_dict() for j in self.jobs],
            "offered_tools": self.offered.as_dict() if self.offered else None,
            "checks_layers": self.checks_layers,
            "layers": self.layer_counts() if self.checks_layers else None,
            "host": self.host,
            "errors": self.errors,
            "wall_s": self.wall_s,
            **({"floor": self.floor} if self.floor is not None else {}),
            **({"not_started": self.not_started} if self.not_started is not None else {}),
            "verb_writes": self.verb_writes,
            **({"writes_unlisted": self.writes_unlisted} if self.writes_unlisted else {}),
        }


@dataclass
class RunRecord:
    runner: str
    agents: dict[str, str]  # each agent the run attacks -> its sandbox
    planned: list[str] = field(default_factory=list)  # unit keys (agent/scenario) the run must report
    versions: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    scenarios: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> ScenarioRecord.as_dict()
    errors: list[str] = field(default_factory=list)  # what stopped the whole run (e.g. the preflight)
    denials: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # agent -> its claimed layers' texts
    comparison: dict[str, Any] | None = None  # against a base report (`--against`: report/compare.py)
    layer_alone: str | None = None  # the one claimed layer left on (`--layer-alone`); None: all of them
    shard: dict[str, int] | None = field(default_factory=_shard_from_environment)  # shard_place; None: not a shard
    preflight_passed: bool = False  # this process's (or its xdist controller's) preflight; not reported

    def add(self, scenario: ScenarioRecord) -> None:
        self.scenarios[scenario.name] = scenario.as_dict()

    def merge(self, part: dict[str, Any]) -> None:
        """Fold in what a pytest-xdist worker reported (its `as_dict()`)."""
        twice = sorted(set(self.scenarios) & set(part.get("scenarios") or {}))
        if twice:  # each ran it, at the same time: their jobs saw each other's files, so neither run proves anything
            self.errors.append(
                f"scenario {', '.join(twice)} ran in two xdist workers at once (expected one worker per scenario: "
                "--dist loadgroup). Fix: use a pytest that xdist can group with (pytest<9.2, pytest-xdist#1386)"
            )
        self.scenarios.update(part.get("scenarios") or {})
        self.versions = self.versions or dict(part.get("run", {}).get("versions") or {})
        self.errors += [e for e in part.get("run", {}).get("errors") or [] if e not in self.errors]

    def as_dict(self) -> Report:
        ordered = {name: self.scenarios[name] for name in self.planned if name in self.scenarios}
        return {
            "run": {
                "versions": self.versions,
                "host": {"name": platform.node(), "kernel": platform.release(), "machine": platform.machine()},
                "runner": self.runner,
                "agents": self.agents,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                "duration_s": round(time.time() - self.started, 3),
                "planned_scenarios": self.planned,
                "denials": self.denials,
                **({"layer_alone": self.layer_alone} if self.layer_alone else {}),
                **({"shard": self.shard} if self.shard else {}),
                "errors": self.errors,
            },
            "scenarios": {**ordered, **self.scenarios},
            **({"comparison": self.comparison} if self.comparison is not None else {}),
        }

    def write_json(self, path: Path) -> None:
        write(path, to_json(self.as_dict()))

    def passed(self) -> bool:
        """The report's own pass rule (boundary/report/passrule.py), as every rendering and the exit status."""
        return passed(self.as_dict())


def to_json(report: Report) -> str:
    """The record as its JSON file holds it: the report and the verdict the pass rule gives it."""
    return json.dumps({**report, "verdict": verdict(report)}, indent=2) + "\n"


def load(path: Path) -> Report:
    """A JSON run record; its `verdict` is not trusted: every reader applies the pass rule again."""
    data = json.loads(path.read_text())
    return data if isinstance(data, dict) else {}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
