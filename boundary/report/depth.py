"""Defence in depth: which claimed layer holds each cell on its own.

The report names only the first layer that refused. `boundary run --layers each` runs once more per claimed layer
with every other one turned off (`--layer-alone`), and `depth_of` puts what each such run saw beside the full run's
cells: the report's "depth", which every rendering shows as a grid (cell × layer) and a line per layer.
"""

from __future__ import annotations

from typing import Any

from boundary.report.passrule import Report, run_of, scenarios_of, worst_result_by_cell


def depth_of(full: Report, alone: dict[str, Report | str]) -> dict[str, Any]:
    """Per layer: per unit of the full run whose runner claims it, per cell, the verdict with that layer alone
    ("DENIED by <layer>", or the verdict); a layer whose run made no report has, instead, why (a string)."""
    cells: dict[str, dict[str, dict[str, str]]] = {}
    not_run: dict[str, str] = {}
    for layer, report in alone.items():
        if isinstance(report, str):
            not_run[layer] = report
            continue
        units = scenarios_of(report)
        cells[layer] = {unit: _cells(scenario) for unit, scenario in units.items()}
    return {"layers": list(alone), "alone": cells, "not_run": not_run, "claimed": _claimed_by_agent(full)}


def _cells(scenario: dict[str, Any]) -> dict[str, str]:
    return {
        f"{target} via {channel}": str(r.get("layer") if r.get("verdict") == "DENIED" else r.get("verdict"))
        for (target, channel), r in worst_result_by_cell(
            [r for r in scenario.get("results") or [] if isinstance(r, dict)]
        ).items()
    }


def _claimed_by_agent(report: Report) -> dict[str, list[str]]:
    denials = run_of(report).get("denials")
    return {str(a): list(layers) for a, layers in denials.items()} if isinstance(denials, dict) else {}


def holds(verdict: str) -> bool:
    """A cell's verdict with one layer alone holds: anything that is not a failing verdict (the layer's own
    name, or another that denied, as `n/a` where nothing was there to find)."""
    return verdict not in ("LEAKED", "TAMPERED", "WRITTEN", "EXECUTED", "INCONCLUSIVE", "None")
