"""The report as one self-contained HTML page: inline CSS, no script, no external URL; hover a cell for its detail.

Its marks are ✓/✗ dingbats, since emoji need a font the viewer may lack. Every string from the report is escaped.
"""

from __future__ import annotations

import html
from typing import Any

from boundary.report import beside, view
from boundary.report.passrule import (
    Report,
    Result,
    failures,
    jobs_of,
    not_denied,
    not_started_of,
    results_of,
    run_of,
    scenarios_of,
)

CSS_CLASS = {"denied": "denied", "leaked": "leaked", "inconclusive": "inconclusive", "none": "na"}
CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1f2328; }
h1 { padding: 10px 14px; border-radius: 6px; color: #fff; font-size: 22px; margin: 0 0 8px; }
h1.pass { background: #1a7f37; } h1.fail { background: #cf222e; }
h2.scenario { font-size: 19px; margin-top: 34px; border-bottom: 2px solid #57606a; }
h2, h3 { font-size: 16px; margin: 22px 0 6px; border-bottom: 1px solid #d0d7de; padding-bottom: 3px; }
ul.reasons, p.reasons { color: #a40e26; font-weight: 600; margin: 4px 0 12px; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; } tbody th { font-weight: 600; background: #f6f8fa; }
td { overflow-wrap: anywhere; max-width: 60em; }
td.cell { text-align: center; font-weight: 600; min-width: 6em; cursor: help; }
.denied { background: #dafbe1; color: #116329; } .leaked { background: #ffebe9; color: #a40e26; }
.inconclusive { background: #fff8c5; color: #7d4e00; } .na { background: #eaeef2; color: #6e7781; }
.meta, .legend { color: #57606a; } .legend span { padding: 1px 6px; margin-right: 6px; border-radius: 3px; }
summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
"""


def to_html(report: Report) -> str:
    """The verdict, who ran what, agents side by side, then a section per scenario."""
    run = run_of(report)
    agents, rows = view.side_by_side(report)
    title = f"boundary {'PASS' if not failures(report) else 'FAIL'}: {run.get('runner', '?')} {', '.join(agents)}"
    body = [*_verdict(report), _header(report), *_errors(run), *_comparison(report)]
    body += [f"<p><b>{_e(said)}</b></p>" for said in beside.depth_lines(report)]
    body += [f'<p class="reasons"><b>{_e(said)}</b></p>' for said in view.not_started_lines(report)]
    body += [f"<p>{_e(said)}</p>" for said in view.verb_write_lines(report)]
    body += [f"<p><i>{_e(said)}</i></p>" for said in view.layer_check_lines(report)]
    if len(agents) > 1:
        body += ["<h2>Agents side by side</h2>", _table(["scenario", *agents], rows)]
    for name, scenario in scenarios_of(report).items():
        body += [f'<h2 class="scenario">{_e(name)}: {_e(scenario.get("title", ""))}</h2>']
        if not_started_of(scenario):  # said once, at the top
            body.append(f"<p>{view.DID_NOT_RUN}: see above</p>")
            continue
        body += [*_matrix(scenario), *_depth(report, name), *_checks(scenario, report)]
        body += [*_host(scenario), *_jobs(scenario)]
        body += [f"<p><i>{_e(said)}</i></p>" for said in view.not_tried(scenario)]
        body += [*_not_denied(scenario), *_errors(scenario), *_all_results(scenario)]
    head = f'<meta charset="utf-8"><title>{_e(title)}</title><style>{CSS}</style>'
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>{head}</head>\n<body>\n' + "\n".join(body) + "\n</body>\n</html>\n"
    )


def _comparison(report: Report) -> list[str]:
    head = beside.comparison_head(report)
    if head is None:
        return []
    rows = beside.comparison_rows(report, shown=None)
    return [f"<h2>{_e(head)}</h2>", *([_table(beside.CHANGE_COLUMNS, rows)] if rows else [])]


def _depth(report: Report, name: str) -> list[str]:
    header, rows = beside.depth_grid(report, name)
    return ["<h3>Each layer alone</h3>", _table(header, rows)] if rows else []


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A plain table; every header and cell is text from the report, so every one is escaped here."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _verdict(report: Report) -> list[str]:
    reasons = failures(report)
    if not reasons:
        return [f'<h1 class="pass">{_e(view.verdict_line(report))}</h1>']  # PASS, and what got weaker if any
    return [
        '<h1 class="fail">FAIL</h1>',
        '<ul class="reasons">' + "".join(f"<li>{_e(r)}</li>" for r in reasons) + "</ul>",
    ]


def _header(report: Report) -> str:
    runner, pair, host = view.stack(report)
    run = run_of(report)
    when = f"started {_e(run.get('started', '?'))}, {view.num(run.get('duration_s'))} s"
    return (
        f'<p class="meta">runner <b>{_e(runner)}</b>: {_e(pair)}<br>'
        + " · ".join(_e(h) for h in host)
        + f"<br>{when}</p>"
    )


def _matrix(scenario: dict[str, Any]) -> list[str]:
    targets, channels, cells = view.matrix(scenario)
    if not targets:
        return ["<h3>Probes</h3>", "<p><b>no probe results</b></p>"]
    head = "<tr><th>target</th>" + "".join(f"<th>{_e(c)}</th>" for c in channels) + "</tr>"
    rows = [
        f"<tr><th>{_e(t)}</th>" + "".join(_cell(t, c, cells.get((t, c))) for c in channels) + "</tr>" for t in targets
    ]
    table = f'<table id="matrix"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    return ["<h3>Target × channel</h3>", table, _legend()]


def _cell(target: str, channel: str, result: Result | None) -> str:
    if result is None:
        hover = f"{target} via {channel}: {view.NO_RESULT_MEANS}"
    else:
        hover = f"{target} via {channel}: {result.get('verdict')} ({result.get('layer')}) — {result.get('detail')}"
    css = CSS_CLASS[view.cell_kind(result)]
    attrs = f'class="cell {css}" data-target="{_e(target)}" data-channel="{_e(channel)}" title="{_e(hover)}"'
    return f"<td {attrs}>{_e(view.cell_text(result))}</td>"


def _legend() -> str:
    none = f"{view.NO_RESULT} {view.NO_RESULT_MEANS}"
    swatches = '<span class="denied">layer that denied</span><span class="leaked">LEAKED</span>'
    swatches += f'<span class="inconclusive">INCONCLUSIVE</span><span class="na">{_e(none)}</span>'
    return f'<p class="legend">{swatches}<br>{_e(view.LEGEND)}. Hover a cell for its detail.</p>'


def _checks(scenario: dict[str, Any], report: Report) -> list[str]:
    offered = scenario.get("offered_tools")
    if isinstance(offered, dict):
        mark = "✓ held" if offered.get("passed") is True else "✗ FAILED"
        parts = view.offered_parts(offered)
        tools = _table(["check", *(k for k, _ in parts)], [[mark, *(v for _, v in parts)]])
    else:
        tools = "<p><b>✗ not checked</b></p>"
    return ["<h3>Offered tools</h3>", tools, "<h3>Layers that denied</h3>", _layers(scenario, report)]


def _layers(scenario: dict[str, Any], report: Report) -> str:
    rows = view.layer_rows(scenario, report)
    if rows is None:
        return "<p>not a layer check: this scenario's probes need not reach every layer</p>"
    if not isinstance(scenario.get("layers"), dict):  # what the runner claimed is not in the report
        return "<p><b>✗ not reported</b></p>"
    marked = [[*row, "✓" if row[2] != "0" else "✗ denied nothing"] for row in rows]
    return _table(view.LAYER_COLUMNS, marked) if rows else "<p>no layer claimed</p>"


def _host(scenario: dict[str, Any]) -> list[str]:
    host = scenario.get("host") or {}
    rows = view.host_rows(host)
    chain = "".join(f"<li>{_e(step)}</li>" for step in host.get("chain") or [])
    table = _table(view.HOST_COLUMNS, rows) if rows else "<p><b>✗ not checked</b></p>"
    return [f"<h3>Host health ({_e(host.get('mode', 'none'))})</h3>", table] + ([f"<ol>{chain}</ol>"] if chain else [])


def _jobs(scenario: dict[str, Any]) -> list[str]:
    rows = [view.job_row(job, ("✓", "✗")) for job in jobs_of(scenario)]
    return ["<h3>Jobs</h3>", _table(view.JOB_COLUMNS, rows) if rows else "<p><b>✗ no jobs reported</b></p>"]


def _not_denied(scenario: dict[str, Any]) -> list[str]:
    keys = ["verdict", "target", "channel", "detail"]
    bad = [[str(r.get(k)) for k in keys] for r in not_denied(scenario)]
    return [f"<h3>Not denied ({len(bad)})</h3>", _table(keys, bad)] if bad else []


def _errors(part: dict[str, Any]) -> list[str]:
    errors = part.get("errors") or []
    return ["<h3>Errors</h3>", "<ul>" + "".join(f"<li>{_e(e)}</li>" for e in errors) + "</ul>"] if errors else []


def _all_results(scenario: dict[str, Any]) -> list[str]:
    keys = ["target", "channel", "verdict", "layer", "duration_s", "detail"]
    rows = [[str(r.get(k)) for k in keys] for r in results_of(scenario)]
    summary = f"<summary>All {len(rows)} results, with their detail</summary>"
    return [f"<details>{summary}{_table(keys, rows)}</details>"] if rows else []
