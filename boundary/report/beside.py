"""What the report puts beside this run: its changes against a base report (`--against`) and what each claimed
layer holds alone (`--layers each`), in the words every rendering shows (as view.py is for the run itself)."""

from __future__ import annotations

from typing import Any

from boundary.report.depth import holds
from boundary.report.passrule import (
    KINDS,
    Report,
    changes_of,
    comparison_of,
    results_of,
    scenarios_of,
    worst_result_by_cell,
)
from boundary.report.view import LAYER_SHORT, NO_RESULT, cell_text

SHOWN_CHANGES = 12  # of each kind, where one screen must hold them: the JSON holds every one
CHANGE_COLUMNS = ["change", "unit", "what", "base", "this run", "in words"]


def comparison_head(report: Report) -> str | None:
    """ "against BASE (started …): 2 weaker, 1 stronger, 0 moved", or None where the report compares nothing."""
    comparison = comparison_of(report)
    if comparison is None:
        return None
    said = comparison.get("base")
    base: dict[str, Any] = said if isinstance(said, dict) else {}
    if base.get("missing"):
        return f"against {base.get('name')}: {base['missing']} — nothing compared"
    changes = changes_of(comparison)
    counts = ", ".join(f"{sum(1 for c in changes if c.get('kind') == kind)} {kind}" for kind in KINDS)
    fails = " (weaker fails this run)" if comparison.get("fail_on") else ""
    return f"against {base.get('name')} (started {base.get('started')}): {counts}{fails}"


def comparison_rows(report: Report, shown: int | None = SHOWN_CHANGES) -> list[list[str]]:
    """The changes against the base report as CHANGE_COLUMNS rows, weaker first; past `shown` of a kind, one row
    says how many more (None: every one)."""
    comparison = comparison_of(report)
    rows: list[list[str]] = []
    for kind in KINDS:
        of_kind = [c for c in changes_of(comparison or {}) if c.get("kind") == kind]
        rows += [
            [
                kind.upper() if kind == "weaker" else kind,
                *(str(c.get(k) or "—") for k in ("unit", "what", "base", "head", "says")),
            ]
            for c in of_kind[:shown]
        ]
        if shown is not None and len(of_kind) > shown:
            rows.append([kind, f"… and {len(of_kind) - shown} more", "", "", "", "(in the JSON report)"])
    return rows


def depth_lines(report: Report) -> list[str]:
    """Per claimed layer, how many cells it holds alone (`--layers each`); a layer that holds none is named so."""
    depth = report.get("depth")
    if not isinstance(depth, dict):
        return []
    lines = []
    for layer in depth.get("layers") or []:
        if layer in (depth.get("not_run") or {}):
            lines.append(f"{layer} alone: not run — {depth['not_run'][layer]}")
            continue
        verdicts = [v for cells in (depth.get("alone") or {}).get(layer, {}).values() for v in cells.values()]
        held = sum(1 for verdict in verdicts if holds(verdict))
        nothing = " — it holds nothing alone" if verdicts and not held else ""
        lines.append(f"{layer} alone: holds {held} of {len(verdicts)} cells{nothing}")
    return lines


def depth_grid(report: Report, unit: str) -> tuple[list[str], list[list[str]]]:
    """The unit's cells × (the full run, each claimed layer alone): header and rows; none without a depth run."""
    depth = report.get("depth")
    scenario = scenarios_of(report).get(unit)
    if not isinstance(depth, dict) or scenario is None:
        return [], []
    alone = depth.get("alone") or {}
    layers = [layer for layer in depth.get("layers") or [] if unit in alone.get(layer, {})]
    if not layers:
        return [], []
    header = ["cell", "full run", *(f"{LAYER_SHORT.get(layer, layer)} alone" for layer in layers)]
    rows = []
    for (target, channel), result in worst_result_by_cell(results_of(scenario)).items():
        cell = f"{target} via {channel}"
        seen = [alone[layer][unit].get(cell, NO_RESULT) for layer in layers]
        rows.append([cell, cell_text(result), *(LAYER_SHORT.get(v, v) for v in seen)])
    return header, rows
