"""The report as GitHub-flavoured Markdown, for `$GITHUB_STEP_SUMMARY`: one screen per scenario."""

from __future__ import annotations

import html
import re
from typing import Any

from boundary.report import beside, view
from boundary.report.passrule import (
    Report,
    Result,
    host_failed,
    host_not_applicable,
    host_unchecked,
    jobs_of,
    not_denied,
    not_started_of,
    passed,
    run_of,
    scenarios_of,
)

ICON = {"denied": "✅", "leaked": "❌", "inconclusive": "⚠️"}


def to_markdown(report: Report) -> str:
    """Each scenario's matrix, its checks, then only what went wrong."""
    mark = "✅" if passed(report) else "❌"
    lines = [f"## {mark} boundary: {_md(view.verdict_line(report))}", "", _header(report), ""]
    lines += _comparison(report)
    lines += [line for said in beside.depth_lines(report) for line in (f"**{_md(said)}**", "")]
    lines += [line for said in view.not_started_lines(report) for line in (f"**{_md(said)}**", "")]
    lines += [line for said in view.verb_write_lines(report) for line in (_md(said), "")]
    lines += [line for said in view.layer_check_lines(report) for line in (f"*{_md(said)}*", "")]
    agents, rows = view.side_by_side(report)
    if len(agents) > 1:
        lines += [_row(["scenario", *agents]), "|---" * (len(agents) + 1) + "|", *(_row(row) for row in rows), ""]
    for name, scenario in scenarios_of(report).items():
        if not_started_of(scenario):  # said once, at the top
            lines += [f"### {name}: {_md(scenario.get('title', ''))}", "", f"{view.DID_NOT_RUN}: see above", ""]
            continue
        lines += [f"### {name}: {_md(scenario.get('title', ''))}", "", *_matrix(scenario), ""]
        header, rows = beside.depth_grid(report, name)
        if rows:
            lines += ["*Each layer alone:*", "", _row(header), "|---" * len(header) + "|", *map(_row, rows), ""]
        lines += [line for said in view.not_tried(scenario) for line in (f"*{_md(said)}*", "")]
        lines += [_offered(scenario), *_layers(scenario, report), *_host(scenario), "", *_jobs(scenario)]
        lines += _not_denied(scenario) + _errors(scenario) + [""]
    lines += [f"<sub>✅ {_md(view.LEGEND)}</sub>", *_errors(run_of(report))]
    return "\n".join(lines) + "\n"


def to_comment(report: Report, link: str = "") -> str:
    """The verdict and the comparison with the base report, for the pull request's one comment of boundary's."""
    mark = "✅" if passed(report) else "❌"
    lines = [f"### {mark} boundary: {_md(view.verdict_line(report))}", ""]
    lines += _comparison(report) or ["*No comparison: the run was not given a base report.*", ""]
    return "\n".join([*lines, *([f"[The run, its reports and the step summary]({link})"] if link else [])]) + "\n"


def _comparison(report: Report) -> list[str]:
    head = beside.comparison_head(report)
    if head is None:
        return []
    rows = beside.comparison_rows(report, shown=None)
    table = [_row(beside.CHANGE_COLUMNS), "|---" * len(beside.CHANGE_COLUMNS) + "|", *(_row(row) for row in rows)]
    return [f"**{_md(head)}**", "", *(table if rows else []), ""]


def _md(text: object) -> str:
    """Tool output and paths must not become markup: escape HTML and Markdown's own punctuation."""
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", html.escape(str(text), quote=False))


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(_md(cell) for cell in cells) + " |"


def _header(report: Report) -> str:
    runner, pair, host = view.stack(report)
    run = run_of(report)
    when = f"started {_md(run.get('started', '?'))}, {view.num(run.get('duration_s'))} s"
    return f"runner **{_md(runner)}**: {_md(pair)} · " + " · ".join(_md(h) for h in host) + f" · {when}"


def _matrix(scenario: dict[str, Any]) -> list[str]:
    targets, channels, cells = view.matrix(scenario)
    if not targets:
        return ["*no probe results*"]
    rows = ["| target | " + " | ".join(_md(c) for c in channels) + " |", "|---" * (len(channels) + 1) + "|"]
    for target in targets:
        row = [_cell(cells.get((target, channel))) for channel in channels]
        rows.append(f"| {_md(target)} | " + " | ".join(row) + " |")
    return rows


def _cell(result: Result | None) -> str:
    return view.cell_text(None) if result is None else f"{ICON[view.cell_kind(result)]} {_md(view.cell_text(result))}"


def _offered(scenario: dict[str, Any]) -> str:
    offered = scenario.get("offered_tools")
    if not isinstance(offered, dict):
        return "- **offered tools:** ❌ not checked"
    mark = "✅ held" if offered.get("passed") is True else "❌ FAILED"
    return f"- **offered tools:** {mark} — " + "; ".join(f"{k}: {_md(v)}" for k, v in view.offered_parts(offered))


def _layers(scenario: dict[str, Any], report: Report) -> list[str]:
    rows = view.layer_rows(scenario, report)
    if rows is None:
        return []
    if not isinstance(scenario.get("layers"), dict):  # what the runner claimed is not in the report
        return ["- **layers that denied:** ❌ not reported"]
    counts = [f"{_md(name)} {_md(n)}/{_md(all_n)}" + ("" if all_n != "0" else " ❌") for name, n, all_n in rows]
    return ["- **layers that denied** (here/in the run): " + (", ".join(counts) or "❌ none claimed")]


def _host(scenario: dict[str, Any]) -> list[str]:
    host = scenario.get("host") or {}
    if not host:
        return ["- **host health:** ❌ not checked"]
    bad = [*host_failed(host), *(f"{c} not checked" for c in host_unchecked(host))]
    line = f"- **host health** ({_md(host.get('mode'))}): " + ("✅ held" if not bad else f"❌ {_md(', '.join(bad))}")
    unchecked = [f"  - ❌ not checked: {_md(c)}: {_md(why)}" for c, why in host_unchecked(host).items()]
    cannot = [f"  - not checked: {_md(c)}: {_md(why)}" for c, why in host_not_applicable(host).items()]
    return [line, *(f"  - {_md(step)}" for step in host.get("chain") or []), *unchecked, *cannot]


def _jobs(scenario: dict[str, Any]) -> list[str]:
    rows = [_row(view.job_row(job, ("✅", "❌"))) for job in jobs_of(scenario)]
    return [_row(view.JOB_COLUMNS), "|---" * len(view.JOB_COLUMNS) + "|", *rows] if rows else ["*no jobs reported*"]


def _not_denied(scenario: dict[str, Any]) -> list[str]:
    """One bullet per target, so the summary stays one screen even when every probe failed."""
    bad = not_denied(scenario)
    by_target: dict[str, list[str]] = {}
    for r in bad:
        by_target.setdefault(str(r.get("target")), []).append(_result(r))
    items = [f"- **{_md(target)}**: " + " · ".join(entries) for target, entries in by_target.items()]
    return ["", f"**Not denied ({len(bad)})**", *items] if bad else []


def _result(result: Result) -> str:
    verdict = str(result.get("verdict"))
    channel = str(result.get("channel")).replace("`", "'")  # a backtick would end the code span
    return f"`{channel}` {ICON[view.cell_kind(result)]} {_md(verdict)}: {_md(result.get('detail'))}"


def _errors(part: dict[str, Any]) -> list[str]:
    errors = part.get("errors") or []
    return ["", "**Errors**", *(f"- {_md(e)}" for e in errors)] if errors else []
