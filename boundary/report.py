"""The run's record: one part per scenario, JSON for machines, one screen for people.

The terminal, JSON, markdown and HTML all read the same report dict, so a run
split over pytest-xdist workers is merged as dicts and rendered once.
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundary.offered import OfferedTools
from boundary.render import (
    LAYER_SHORT,
    failures,
    host_failed,
    host_not_applicable,
    host_unchecked,
    not_applicable,
    scenario_failures,
    side_by_side,
    to_html,
    to_markdown,
    verdict,
    worst_by_cell,
)
from boundary.scenarios.base import Cell, ProbeResult
from boundary.session import JobReport


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
        """As `render.worst_by_cell`: a result that is not DENIED wins over one that is."""
        cells: dict[Cell, ProbeResult] = {}
        for result in self.results:
            cell = (result.target, result.channel)
            if cell not in cells or (cells[cell].verdict == "DENIED" and result.verdict != "DENIED"):
                cells[cell] = result
        return cells

    def as_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "agent": self.agent,
            "not_applicable": self.not_applicable,
            "planned": [list(cell) for cell in self.planned],
            "results": [r.as_dict() for r in self.results],
            "jobs": [j.as_dict() for j in self.jobs],
            "offered_tools": self.offered.as_dict() if self.offered else None,
            "checks_layers": self.checks_layers,
            "layers": self.layer_counts() if self.checks_layers else None,
            "host": self.host,
            "errors": self.errors,
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

    def as_dict(self) -> dict[str, Any]:
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
                "errors": self.errors,
            },
            "scenarios": {**ordered, **self.scenarios},
        }

    def write_json(self, path: Path) -> None:
        report = self.as_dict()
        _write(path, json.dumps({**report, "verdict": verdict(report)}, indent=2) + "\n")

    def write_html(self, path: Path) -> None:
        _write(path, to_html(self.as_dict()))

    def write_markdown(self, path: Path) -> None:
        _write(path, to_markdown(self.as_dict()))

    def passed(self) -> bool:
        """One pass rule for the terminal, JSON, markdown and HTML: the report's own (boundary.render)."""
        return not failures(self.as_dict())


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# --- the terminal: one table per scenario, then the run's verdict ------------------------------------------


def summary_lines(report: dict[str, Any]) -> list[str]:
    run = report.get("run") or {}
    versions = ", ".join(f"{k} {v}" for k, v in (run.get("versions") or {}).items())
    pairs = ", ".join(f"{agent} × {sandbox}" for agent, sandbox in (run.get("agents") or {}).items())
    lines = [f"runner {run.get('runner')}: {pairs} ({versions})"]
    lines += side_by_side_lines(report)
    for name, scenario in (report.get("scenarios") or {}).items():
        lines += ["", *_scenario_lines(name, scenario)]
    lines += ["", *LEGEND_LINES]
    lines += [f"ERROR: {error}" for error in run.get("errors") or []]
    reasons = failures(report)
    lines.append("RESULT: " + ("FAIL — " + "; ".join(reasons) if reasons else "PASS — every probe denied"))
    return lines


def side_by_side_lines(report: dict[str, Any]) -> list[str]:
    """With several agents: each scenario's outcome per agent, in one table, before the details."""
    agents, rows = side_by_side(report)
    if len(agents) < 2:
        return []
    width = max(len(row[0]) for row in rows)
    widths = [max(len(agent), *(len(row[i + 1]) for row in rows)) for i, agent in enumerate(agents)]
    lines = ["", " " * width + "  " + "  ".join(a.ljust(w) for a, w in zip(agents, widths, strict=True))]
    for row in rows:
        cells = "  ".join(cell.ljust(w) for cell, w in zip(row[1:], widths, strict=True))
        lines.append((row[0].ljust(width) + "  " + cells).rstrip())
    return lines


LEGEND_LINES = [
    "cells: the layer that denied (perm = agent permission, plugin = runner plugin, os = OS sandbox,",
    "       ok = nothing found); LEAKED, TAMPERED, WRITTEN, EXECUTED and INCONCLUSIVE fail; · = not planned",
]


def _scenario_lines(name: str, scenario: dict[str, Any]) -> list[str]:
    failed = scenario_failures(name, scenario)
    lines = [f"== {name}: {scenario.get('title')} — {'FAILED' if failed else 'held'}"]
    lines += _matrix(scenario.get("results") or [])
    if scenario.get("not_applicable"):
        lines.append(not_applicable(scenario))
    offered = scenario.get("offered_tools")
    if offered:
        mark = "held" if offered.get("passed") else "FAILED"
        explain = OfferedTools(frozenset(offered["expected"]), frozenset(offered["offered"]), ()).explain()
        lines.append(f"offered tools: {mark} — " + ("; ".join(_offered_problems(offered)) or explain))
    if scenario.get("layers") is not None:
        counts = ", ".join(f"{LAYER_SHORT.get(k, k)} {n}" for k, n in scenario["layers"].items())
        lines.append(f"layers that denied: {counts or 'none claimed'}")
    lines += _host_lines(scenario.get("host"))
    for job in scenario.get("jobs") or []:
        network = (job.get("network") or {}).get("explain") or ("clean" if _clean(job) else "NOT CLEAN")
        problems = f" — {'; '.join(job['problems'])}" if job.get("problems") else ""
        lines.append(f"job {job['name']}: {job['wall_s']:.1f} s, exit {job['exit_code']}, {network}{problems}")
    for result in scenario.get("results") or []:
        if result["verdict"] != "DENIED":
            lines.append(f"{result['verdict']}: {result['target']} via {result['channel']}: {result['detail']}")
    lines += [f"ERROR: {error}" for error in scenario.get("errors") or []]
    return lines


def _clean(job: dict[str, Any]) -> bool:
    return bool((job.get("network") or {}).get("clean"))


def _offered_problems(offered: dict[str, Any]) -> list[str]:
    return [f"{key}: {', '.join(offered[key])}" for key in ("forbidden", "added", "missing") if offered.get(key)]


def _cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return "·"
    if result["verdict"] == "DENIED":
        return str(LAYER_SHORT.get(result["layer"], result["layer"]))
    return str(result["verdict"])


def _matrix(results: list[dict[str, Any]]) -> list[str]:
    if not results:
        return ["(no probe results)"]
    targets = list(dict.fromkeys(r["target"] for r in results))
    channels = list(dict.fromkeys(r["channel"] for r in results))
    by_cell = worst_by_cell(results)
    width = max(len(t) for t in targets)
    widths = [max(len(c), 7) for c in channels]
    header = (" " * width + "  " + "  ".join(c.ljust(w) for c, w in zip(channels, widths, strict=True))).rstrip()
    rows = [header]
    for target in targets:
        cells = [_cell(by_cell.get((target, c))).ljust(w) for c, w in zip(channels, widths, strict=True)]
        rows.append((target.ljust(width) + "  " + "  ".join(cells)).rstrip())
    return rows


def _host_lines(host: dict[str, Any] | None) -> list[str]:
    if not isinstance(host, dict):
        return ["host health: not checked"]
    failed, unchecked = host_failed(host), host_unchecked(host)
    head = f"host {host.get('mode')} (up in {host.get('boot_s', 0):.2f} s, {host.get('samples')} samples): "
    not_checked = [f"  NOT CHECKED: {check}: {why}" for check, why in unchecked.items()]
    not_checked += [f"  not checked: {check}: {why}" for check, why in host_not_applicable(host).items()]
    if not failed and not unchecked:
        return [head + "held — " + ", ".join(host.get("checks") or {}), *not_checked]
    if not failed:
        return [head + f"NOT CHECKED — {', '.join(unchecked)}", *not_checked]
    steps = [f"  {step}" for step in host.get("chain") or []]
    return [head + f"FAILED — {', '.join(failed)}; in the order seen:", *steps, *not_checked]
