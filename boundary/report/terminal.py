"""The report on the terminal, after the live suite: agents side by side, a table per scenario, the verdict."""

from __future__ import annotations

import textwrap
from typing import Any

from boundary.report.beside import CHANGE_COLUMNS, comparison_head, comparison_rows, depth_lines
from boundary.report.offered import OfferedTools
from boundary.report.passrule import (
    Report,
    host_failed,
    host_not_applicable,
    host_unchecked,
    jobs_of,
    network_of,
    network_state,
    not_denied,
    not_started_of,
    run_of,
    scenario_failures,
    scenarios_of,
)
from boundary.report.view import (
    DID_NOT_RUN,
    LAYER_SHORT,
    LEGEND,
    cell_text,
    layer_check_lines,
    layer_rows,
    matrix,
    not_started_lines,
    not_tried,
    num,
    side_by_side,
    verb_write_lines,
    verdict_line,
)

WIDTH = 100  # the legend's lines, as wide as a scenario's matrix usually is
MIN_COLUMN = 7  # a matrix column fits the longest cell text ("INCONCLUSIVE" aside) whatever its channel's name


def to_text(report: Report) -> str:
    """`summary_lines` as one text, as the other renderings return theirs."""
    return "\n".join(summary_lines(report)) + "\n"


def summary_lines(report: Report) -> list[str]:
    run = run_of(report)
    versions = ", ".join(f"{k} {v}" for k, v in (run.get("versions") or {}).items())
    pairs = ", ".join(f"{agent} × {sandbox}" for agent, sandbox in (run.get("agents") or {}).items())
    lines = [f"runner {run.get('runner')}: {pairs} ({versions})", *_comparison_lines(report)]
    depth = depth_lines(report)
    lines += [*depth, "(each cell with each layer alone: the markdown and HTML reports)", ""] if depth else []
    lines += not_started_lines(report)
    lines += verb_write_lines(report) + layer_check_lines(report)
    lines += side_by_side_lines(report)
    for name, scenario in scenarios_of(report).items():
        lines += ["", *_scenario_lines(name, scenario, report)]
    lines += ["", *_legend_lines()]
    lines += [f"ERROR: {error}" for error in run.get("errors") or []]
    return [*lines, f"RESULT: {verdict_line(report)}"]


def _comparison_lines(report: Report) -> list[str]:
    """Against the base report: the counts, then each change, weaker first."""
    head = comparison_head(report)
    if head is None:
        return []
    rows = comparison_rows(report)
    return [head, *(_columns(CHANGE_COLUMNS, rows, []) if rows else []), ""]


def _legend_lines() -> list[str]:
    """The legend, wrapped between its entries: `ok = nothing found` is never split over two lines."""
    glued = LEGEND.replace(" = ", "\xa0=\xa0")  # textwrap breaks at ASCII white space only
    lines = textwrap.wrap(glued, WIDTH, subsequent_indent="       ", break_on_hyphens=False)
    return [line.replace("\xa0", " ") for line in lines]


def side_by_side_lines(report: Report) -> list[str]:
    """With several agents: each scenario's outcome per agent, in one table, before the details."""
    agents, rows = side_by_side(report)
    if len(agents) < 2:
        return []
    return ["", *_columns(["", *agents], rows, [max(len(row[0]) for row in rows)])]


def _columns(header: list[str], rows: list[list[str]], widths: list[int], least: int = 0) -> list[str]:
    """Left-aligned columns two spaces apart: the first `widths` given, the others as wide as their widest cell."""
    for i in range(len(widths), len(header)):
        widths.append(max(least, len(header[i]), *(len(row[i]) for row in rows)))
    return [("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))).rstrip() for row in [header, *rows]]


def _scenario_lines(name: str, scenario: dict[str, Any], report: Report) -> list[str]:
    if not_started_of(scenario):  # said once, at the top
        return [f"== {name}: {scenario.get('title')} — {DID_NOT_RUN}: its jobs did not start (above)"]
    failed = scenario_failures(name, scenario, report)
    lines = [f"== {name}: {scenario.get('title')} — {'FAILED' if failed else 'held'}", *_matrix(scenario)]
    lines += not_tried(scenario)
    offered = scenario.get("offered_tools")
    if offered:
        mark = "held" if offered.get("passed") else "FAILED"
        explain = OfferedTools(frozenset(offered["expected"]), frozenset(offered["offered"]), ()).explain()
        lines.append(f"offered tools: {mark} — " + ("; ".join(_offered_problems(offered)) or explain))
    layers = layer_rows(scenario, report)
    if layers is not None:  # here / in all of the agent's units of the run
        counts = [f"{LAYER_SHORT.get(k, k)} {n}/{in_run}" + (" ✗" if in_run == "0" else "") for k, n, in_run in layers]
        lines.append(f"layers that denied (here/in the run): {', '.join(counts) or 'none claimed'}")
    lines += _host_lines(scenario.get("host"))
    for job in jobs_of(scenario):
        network = network_of(job).get("explain") or network_state(job)
        problems = f" — {'; '.join(job['problems'])}" if job.get("problems") else ""
        lines.append(
            f"job {job.get('name')}: {num(job.get('wall_s'))} s, exit {job.get('exit_code')}, {network}{problems}"
        )
    lines += [
        f"{r.get('verdict')}: {r.get('target')} via {r.get('channel')}: {r.get('detail')}" for r in not_denied(scenario)
    ]
    return lines + [f"ERROR: {error}" for error in scenario.get("errors") or []]


def _offered_problems(offered: dict[str, Any]) -> list[str]:
    return [f"{key}: {', '.join(offered[key])}" for key in ("forbidden", "added", "missing") if offered.get(key)]


def _matrix(scenario: dict[str, Any]) -> list[str]:
    targets, channels, cells = matrix(scenario)
    if not targets:
        return ["(no probe results)"]
    rows = [[t, *(cell_text(cells.get((t, c))) for c in channels)] for t in targets]
    return _columns(["", *channels], rows, [max(len(t) for t in targets)], least=MIN_COLUMN)


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
