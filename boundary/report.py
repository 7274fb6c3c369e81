"""The run's record: JSON for machines, one screen for people."""

from __future__ import annotations

import json
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundary.crossjob import ProbeResult
from boundary.offered import OfferedTools
from boundary.render import LAYER_SHORT, failures, to_html, to_markdown
from boundary.session import JobReport


@dataclass
class RunRecord:
    runner: str
    agent: str
    sandbox: str
    versions: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    results: list[ProbeResult] = field(default_factory=list)
    jobs: list[JobReport] = field(default_factory=list)
    offered: OfferedTools | None = None
    claimed_layers: list[str] = field(default_factory=list)  # layers the runner says it has
    errors: list[str] = field(default_factory=list)  # what stopped a scenario before it had results
    host: dict[str, Any] | None = None  # host health (boundary.host.health.host_report)

    def layer_counts(self) -> dict[str, int]:
        """How many probes each claimed layer denied; a claimed layer that denied none is not shown to work."""
        counts = dict.fromkeys(self.claimed_layers, 0)
        for result in self.results:
            if result.verdict == "DENIED" and result.layer in counts:
                counts[result.layer] += 1
        return counts

    def silent_layers(self) -> list[str]:
        return [layer for layer, count in self.layer_counts().items() if count == 0]

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": {
                "versions": self.versions,
                "host": {"name": platform.node(), "kernel": platform.release(), "machine": platform.machine()},
                "runner": self.runner,
                "agent": self.agent,
                "sandbox": self.sandbox,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                "duration_s": round(time.time() - self.started, 3),
                "errors": self.errors,
            },
            "results": [r.as_dict() for r in self.results],
            "jobs": [j.as_dict() for j in self.jobs],
            "offered_tools": self.offered.as_dict() if self.offered else None,
            "layers": self.layer_counts(),
            "host": self.host,
        }

    def write_json(self, path: Path) -> None:
        _write(path, json.dumps(self.as_dict(), indent=2) + "\n")

    def write_html(self, path: Path) -> None:
        _write(path, to_html(self.as_dict()))

    def write_markdown(self, path: Path) -> None:
        _write(path, to_markdown(self.as_dict()))

    def passed(self) -> bool:
        """One pass rule for the terminal, JSON, markdown and HTML: the report's own (boundary.render)."""
        return not failures(self.as_dict())


def _cell(result: ProbeResult | None) -> str:
    if result is None:
        return "·"
    if result.verdict == "DENIED":
        return LAYER_SHORT.get(result.layer, result.layer)
    return result.verdict


def summary_lines(record: RunRecord) -> list[str]:
    """The terminal table: target × channel, the denying layer in each held cell."""
    versions = ", ".join(f"{k} {v}" for k, v in record.versions.items())
    lines = [f"runner {record.runner}: {record.agent} × {record.sandbox} ({versions})"]
    lines += _matrix(record.results)
    lines.append("cells: the layer that denied (perm = agent permission, plugin = runner plugin, os = OS sandbox,")
    lines.append("       ok = nothing found); LEAKED and INCONCLUSIVE fail the run; · = not applicable")
    if record.offered:
        mark = "held" if record.offered.passed else "FAILED"
        lines.append(f"offered tools: {mark} — {record.offered.explain()}")
    counts = ", ".join(f"{LAYER_SHORT.get(layer, layer)} {n}" for layer, n in record.layer_counts().items())
    silent = record.silent_layers()
    lines.append(f"layers that denied: {counts}" + (f" — FAILED: never seen: {', '.join(silent)}" if silent else ""))
    lines += _host_lines(record.host)
    for job in record.jobs:
        network = "network not traced" if job.network is None else job.network.explain()
        line = f"job {job.name}: {job.wall_s:.1f} s, exit {job.exit_code}, {network}"
        lines.append(line + _problems(job.problems))
    for result in record.results:
        if result.verdict != "DENIED":
            lines.append(f"{result.verdict}: {result.target} via {result.channel}: {result.detail}")
    lines += [f"ERROR: {error}" for error in record.errors]
    reasons = failures(record.as_dict())
    lines.append("RESULT: " + ("FAIL — " + "; ".join(reasons) if reasons else "PASS — every probe denied"))
    return lines


def _matrix(results: list[ProbeResult]) -> list[str]:
    if not results:
        return ["(no probe results)"]
    targets = list(dict.fromkeys(r.target for r in results))
    channels = list(dict.fromkeys(r.channel for r in results))
    by_cell = {(r.target, r.channel): r for r in results}
    width = max(len(t) for t in targets)
    widths = [max(len(c), 7) for c in channels]
    header = (" " * width + "  " + "  ".join(c.ljust(w) for c, w in zip(channels, widths, strict=True))).rstrip()
    rows = [header]
    for target in targets:
        cells = [_cell(by_cell.get((target, c))).ljust(w) for c, w in zip(channels, widths, strict=True)]
        rows.append((target.ljust(width) + "  " + "  ".join(cells)).rstrip())
    return rows


def _problems(problems: list[str]) -> str:
    return f" — {'; '.join(problems)}" if problems else ""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _host_lines(host: dict[str, Any] | None) -> list[str]:
    if host is None:
        return ["host health: not checked"]
    failed = [check for check, state in host["checks"].items() if not state["ok"]]
    head = f"host {host['mode']} (up in {host['boot_s']:.2f} s, {host['samples']} samples): "
    not_checked = [f"  not checked: {check}: {why}" for check, why in (host.get("not_checked") or {}).items()]
    if not failed:
        return [head + "held — " + ", ".join(host["checks"]), *not_checked]
    steps = [f"  {step}" for step in host["chain"]]
    return [head + f"FAILED — {', '.join(failed)}; in the order seen:", *steps, *not_checked]
