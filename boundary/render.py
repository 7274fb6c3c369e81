"""A run's JSON report as Markdown (for `$GITHUB_STEP_SUMMARY`) or one self-contained HTML page.

Pure functions of the report dict (`json.loads` of the file). Anything the report lacks is shown as
"not checked" and fails the run: a green page is a security claim, so absent evidence is never a pass.
"""

from __future__ import annotations

import html
import re
from typing import Any

from boundary.host.health import checks_for

LAYER_SHORT = {
    "agent permission": "perm",
    "runner plugin": "plugin",
    "OS sandbox": "os",
    "n/a": "ok",
    "not run": "norun",
}
Result = dict[str, Any]
MD_ICON = {"DENIED": "✅", "LEAKED": "❌", "TAMPERED": "❌", "WRITTEN": "❌", "EXECUTED": "❌", "INCONCLUSIVE": "⚠️"}
LEGEND = (
    "perm = agent permission, plugin = runner plugin, os = OS sandbox, ok = nothing found, "
    "norun = planted code never ran, · = not applicable"
)


# --- the verdict: one rule, shared by both renderings --------------------------------------------------------


def failures(report: dict[str, Any]) -> list[str]:
    """Why the run fails; empty means PASS. Every planned scenario must be there, and hold."""
    scenarios = _scenarios(report)
    planned = _run(report).get("planned_scenarios") or []
    reasons = [f"scenario {name} not reported" for name in planned if name not in scenarios]
    if not scenarios:
        reasons.append("no scenario reported")
    for name, scenario in scenarios.items():
        reasons += scenario_failures(name, scenario)
    return reasons + _error_failures(report)


def scenario_failures(name: str, scenario: dict[str, Any]) -> list[str]:
    checks = (_probe_failures, _offered_failures, _layer_failures, _network_failures, _host_failures)
    reasons = [reason for check in checks for reason in check(scenario)]
    reasons += [f"error: {error}" for error in scenario.get("errors") or []]
    return [f"{name}: {reason}" for reason in reasons]


def passed(report: dict[str, Any]) -> bool:
    return not failures(report)


def _probe_failures(scenario: dict[str, Any]) -> list[str]:
    results = _results(scenario)
    done = {(str(r.get("target")), str(r.get("channel"))) for r in results}
    missing = [f"{t} via {c}" for t, c in (tuple(cell) for cell in scenario.get("planned") or []) if (t, c) not in done]
    reasons = [f"{len(missing)} planned probes have no result ({', '.join(missing[:3])}…)"] if missing else []
    bad = sum(1 for r in results if r.get("verdict") != "DENIED")
    if not results:
        return [*reasons, "no probe results"]
    return reasons + ([f"{bad} of {len(results)} probes not denied"] if bad else [])


def _offered_failures(scenario: dict[str, Any]) -> list[str]:
    offered = scenario.get("offered_tools")
    if not isinstance(offered, dict):
        return ["offered tools not checked"]
    return [] if offered.get("passed") is True else ["offered tools differ from the expected set"]


def _layer_failures(scenario: dict[str, Any]) -> list[str]:
    if scenario.get("checks_layers") is False:
        return []  # this scenario's probes need not reach every layer (a missing flag fails closed)
    layers = scenario.get("layers")
    if not isinstance(layers, dict) or not layers:
        return ["the runner claims no layer that denies: nothing shows a defence working"]
    # A claimed layer that denied nothing may have silently stopped working, even if others held.
    return [f"layer {name} denied nothing" for name, count in layers.items() if not _positive(count)]


def _network_failures(scenario: dict[str, Any]) -> list[str]:
    jobs = _jobs(scenario)
    if not jobs:
        return ["no jobs reported"]
    return [f"job {j.get('name')}: network {_network_state(j)}" for j in jobs if _network_state(j) != "clean"]


def _host_failures(scenario: dict[str, Any]) -> list[str]:
    host = scenario.get("host")
    if not isinstance(host, dict) or not isinstance(host.get("checks"), dict) or not host["checks"]:
        return ["host health not checked"]
    failed = [f"host {check} failed" for check in host_failed(host)]
    return failed + [f"host {check} not checked: {why}" for check, why in host_unchecked(host).items()]


def host_failed(host: dict[str, Any]) -> list[str]:
    """The checks that ran and failed (a state that does not say ok is a failure)."""
    checks = host.get("checks")
    items = checks.items() if isinstance(checks, dict) else []
    return [str(check) for check, state in items if not (isinstance(state, dict) and state.get("ok") is True)]


def host_unchecked(host: dict[str, Any]) -> dict[str, str]:
    """Each check this kind of host can run that has no result, and why: absent evidence is no pass. A check the
    host cannot run (a namespace host has no systemd: `services`) is said (`host_not_applicable`), not failed."""
    checks = host.get("checks") if isinstance(host.get("checks"), dict) else {}
    said = host.get("not_checked") if isinstance(host.get("not_checked"), dict) else {}
    missing = [check for check in checks_for(str(host.get("mode"))) if check not in (checks or {})]
    return {check: str((said or {}).get(check) or "no result in the host report") for check in missing}


def host_not_applicable(host: dict[str, Any]) -> dict[str, str]:
    """The checks the report says this host cannot run, which its kind indeed cannot: said, never counted held."""
    said = host.get("not_checked") if isinstance(host.get("not_checked"), dict) else {}
    required = checks_for(str(host.get("mode")))
    return {str(check): str(why) for check, why in (said or {}).items() if check not in required}


def verdict(report: dict[str, Any]) -> dict[str, Any]:
    """The run's verdict as the JSON report states it: the same rule as every other rendering and the exit status."""
    reasons = failures(report)
    return {"passed": not reasons, "failures": reasons}


def worst_by_cell(results: list[Result]) -> dict[tuple[str, str], Result]:
    """One result per cell: where a cell was reported more than once, it holds only if every result held,
    so a result that is not DENIED wins over one that is (the first of each kind)."""
    cells: dict[tuple[str, str], Result] = {}
    for result in results:
        cell = (str(result.get("target")), str(result.get("channel")))
        if cell not in cells or (cells[cell].get("verdict") == "DENIED" and result.get("verdict") != "DENIED"):
            cells[cell] = result
    return cells


def _error_failures(report: dict[str, Any]) -> list[str]:
    return [f"error: {error}" for error in _run(report).get("errors") or []]


def _positive(count: Any) -> bool:
    return isinstance(count, int) and not isinstance(count, bool) and count > 0


def _network(job: dict[str, Any]) -> dict[str, Any]:
    network = job.get("network")
    return network if isinstance(network, dict) else {}


def _network_state(job: dict[str, Any]) -> str:
    network = job.get("network")
    if not isinstance(network, dict):
        return "not traced"
    return "clean" if network.get("clean") is True else "NOT CLEAN"


def side_by_side(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Agents, and per scenario a row: its name, then per agent `held` or why not (`-` where it did not run)."""
    scenarios = _scenarios(report)
    agents = list(dict.fromkeys(_agent_of(name, s) for name, s in scenarios.items()))
    rows: dict[str, list[str]] = {}
    for name, scenario in scenarios.items():
        base = name.rpartition("/")[2]
        row = rows.setdefault(base, [base, *("-" for _ in agents)])
        row[1 + agents.index(_agent_of(name, scenario))] = _outcome(name, scenario)
    return agents, list(rows.values())


def not_applicable(scenario: dict[str, Any]) -> str:
    kinds = ", ".join(str(kind) for kind in scenario.get("not_applicable") or [])
    return f"not applicable: channels through a {kinds} tool ({scenario.get('agent')} has none) — not tried"


def _agent_of(name: str, scenario: dict[str, Any]) -> str:
    return str(scenario.get("agent") or name.rpartition("/")[0] or "?")


def _outcome(name: str, scenario: dict[str, Any]) -> str:
    reasons = scenario_failures(name, scenario)
    if not reasons:
        return f"held ({len(_results(scenario))} probes)"
    if scenario.get("errors"):
        return "NOT COVERED" if "NOT COVERED" in " ".join(scenario["errors"]) else "ERROR"
    not_denied = sum(1 for r in _results(scenario) if r.get("verdict") != "DENIED")
    return f"FAILED ({not_denied} of {len(_results(scenario))} not denied)" if not_denied else "FAILED"


# --- reading the report -------------------------------------------------------------------------------------


def _run(report: dict[str, Any]) -> dict[str, Any]:
    run = report.get("run")
    return run if isinstance(run, dict) else {}


def _scenarios(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    scenarios = report.get("scenarios")
    if not isinstance(scenarios, dict):
        return {}
    return {str(name): s for name, s in scenarios.items() if isinstance(s, dict)}


def _results(scenario: dict[str, Any]) -> list[Result]:
    return [r for r in scenario.get("results") or [] if isinstance(r, dict)]


def _jobs(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    return [j for j in scenario.get("jobs") or [] if isinstance(j, dict)]


def _matrix(report: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], Result]]:
    """Targets and channels in first-seen order (the order the scenario ran them), and each cell's result."""
    results = _results(report)
    targets = list(dict.fromkeys(str(r.get("target")) for r in results))
    channels = list(dict.fromkeys(str(r.get("channel")) for r in results))
    return targets, channels, worst_by_cell(results)


def _not_denied(report: dict[str, Any]) -> list[Result]:
    return [r for r in _results(report) if r.get("verdict") != "DENIED"]


def _cell_text(result: Result | None) -> str:
    if result is None:
        return "·"
    if result.get("verdict") == "DENIED":
        layer = str(result.get("layer"))
        return LAYER_SHORT.get(layer, layer)
    return str(result.get("verdict"))


def _version(report: dict[str, Any], name: str) -> str:
    versions = _run(report).get("versions")
    return str(versions.get(name, "unknown")) if isinstance(versions, dict) else "unknown"


def _stack(report: dict[str, Any]) -> tuple[str, str, list[str]]:
    """Who ran what: runner, "agent version × sandbox version" per agent, and the host pieces sandboxes need."""
    run = _run(report)
    agents = run.get("agents")
    agents = agents if isinstance(agents, dict) else {}
    pair = "; ".join(f"{a} {_version(report, a)} × {s} {_version(report, s)}" for a, s in agents.items()) or "?"
    return (
        str(run.get("runner", "?")),
        pair,
        [
            *(f"{name} {_version(report, name)}" for name in ("bwrap", "node", "kernel")),
            f"tools {_version(report, 'tools')}",
        ],
    )


def _verdict_line(report: dict[str, Any]) -> str:
    reasons = failures(report)
    return "FAIL — " + "; ".join(reasons) if reasons else "PASS — every probe denied"


def _offered_parts(offered: dict[str, Any]) -> list[tuple[str, str]]:
    def names(key: str) -> str:
        return ", ".join(str(n) for n in offered.get(key) or []) or "none"

    expected = f"{len(offered.get('expected') or [])} ({names('expected')})"
    return [
        ("expected", expected),
        ("added", names("added")),
        ("missing", names("missing")),
        ("forbidden", names("forbidden")),
    ]


JOB_COLUMNS = ["job", "wall s", "exit", "network", "inet peers", "unix sockets", "problems"]


def _job_row(job: dict[str, Any], marks: tuple[str, str]) -> list[str]:
    """One job as text cells; `marks` are the good/bad signs the output format renders best."""
    network, state = _network(job), _network_state(job)
    # Without a trace there is nothing to list: "—", not "none", which would claim the job was seen to be quiet.
    peers = [
        (", ".join(str(p) for p in network.get(key) or []) or "none") if network else "—" for key in ("inet", "unix")
    ]
    status = f"{marks[0] if state == 'clean' else marks[1]} {state}"
    problems = "; ".join(str(p) for p in job.get("problems") or []) or "none"
    return [str(job.get("name")), _num(job.get("wall_s")), str(job.get("exit_code")), status, *peers, problems]


def _num(value: Any, fmt: str = "{:.1f}") -> str:
    return fmt.format(value) if isinstance(value, int | float) and not isinstance(value, bool) else "?"


# --- Markdown -----------------------------------------------------------------------------------------------


def to_markdown(report: dict[str, Any]) -> str:
    """GitHub-flavoured, kept to one screen per scenario: its matrix, its checks, then only what went wrong."""
    mark = "✅" if passed(report) else "❌"
    lines = [f"## {mark} boundary: {_md(_verdict_line(report))}", "", _md_header(report), ""]
    agents, rows = side_by_side(report)
    if len(agents) > 1:
        lines += ["| scenario | " + " | ".join(_md(a) for a in agents) + " |", "|---" * (len(agents) + 1) + "|"]
        lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in rows] + [""]
    for name, scenario in _scenarios(report).items():
        lines += [f"### {name}: {_md(scenario.get('title', ''))}", "", *_md_matrix(scenario), ""]
        lines += [f"*{_md(not_applicable(scenario))}*", ""] if scenario.get("not_applicable") else []
        lines += [_md_offered(scenario), *_md_layers(scenario), *_md_host(scenario), "", *_md_jobs(scenario)]
        lines += _md_not_denied(scenario) + _md_errors(scenario) + [""]
    lines += [f"<sub>✅ the layer that denied: {LEGEND}</sub>", *_md_errors(_run(report))]
    return "\n".join(lines) + "\n"


def _md(text: object) -> str:
    """Tool output and paths must not become markup: escape HTML and Markdown's own punctuation."""
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", html.escape(str(text), quote=False))


def _md_header(report: dict[str, Any]) -> str:
    runner, pair, host = _stack(report)
    run = _run(report)
    when = f"started {_md(run.get('started', '?'))}, {_num(run.get('duration_s'))} s"
    return f"runner **{_md(runner)}**: {_md(pair)} · " + " · ".join(_md(h) for h in host) + f" · {when}"


def _md_matrix(report: dict[str, Any]) -> list[str]:
    targets, channels, cells = _matrix(report)
    if not targets:
        return ["*no probe results*"]
    rows = ["| target | " + " | ".join(_md(c) for c in channels) + " |", "|---" * (len(channels) + 1) + "|"]
    for target in targets:
        row = [_md_cell(cells.get((target, channel))) for channel in channels]
        rows.append(f"| {_md(target)} | " + " | ".join(row) + " |")
    return rows


def _md_cell(result: Result | None) -> str:
    if result is None:
        return "·"
    return f"{MD_ICON.get(str(result.get('verdict')), '⚠️')} {_md(_cell_text(result))}"


def _md_offered(report: dict[str, Any]) -> str:
    offered = report.get("offered_tools")
    if not isinstance(offered, dict):
        return "- **offered tools:** ❌ not checked"
    mark = "✅ held" if offered.get("passed") is True else "❌ FAILED"
    return f"- **offered tools:** {mark} — " + "; ".join(f"{k}: {_md(v)}" for k, v in _offered_parts(offered))


def _host_rows(report: dict[str, Any]) -> list[list[str]]:
    host = report.get("host") or {}
    failed = host_failed(host)
    rows = [
        [
            str(c),
            "✓ held" if c not in failed else f"✗ first failed {st.get('first_failed')}: {st.get('detail')}",
            f"{st.get('before', '?')} → {st.get('after', '?')}",
        ]
        for c, st in (host.get("checks") or {}).items()
        if isinstance(st, dict)
    ]
    rows += [[c, f"✗ not checked: {why}", ""] for c, why in host_unchecked(host).items()]
    return rows + [[c, f"not checked (this host cannot): {why}", ""] for c, why in host_not_applicable(host).items()]


def _md_host(report: dict[str, Any]) -> list[str]:
    host = report.get("host") or {}
    if not host:
        return ["- **host health:** ❌ not checked"]
    bad = [*host_failed(host), *(f"{c} not checked" for c in host_unchecked(host))]
    line = f"- **host health** ({_md(host.get('mode'))}): " + ("✅ held" if not bad else f"❌ {_md(', '.join(bad))}")
    unchecked = [f"  - ❌ not checked: {_md(c)}: {_md(why)}" for c, why in host_unchecked(host).items()]
    cannot = [f"  - not checked: {_md(c)}: {_md(why)}" for c, why in host_not_applicable(host).items()]
    return [line, *(f"  - {_md(step)}" for step in host.get("chain") or []), *unchecked, *cannot]


def _html_host(report: dict[str, Any]) -> list[str]:
    host = report.get("host") or {}
    rows = _host_rows(report)
    chain = "".join(f"<li>{_e(step)}</li>" for step in host.get("chain") or [])
    table = _table(["check", "state", "before → after"], rows) if rows else "<p><b>✗ not checked</b></p>"
    return [f"<h3>Host health ({_e(host.get('mode', 'none'))})</h3>", table] + ([f"<ol>{chain}</ol>"] if chain else [])


def _md_layers(scenario: dict[str, Any]) -> list[str]:
    layers = scenario.get("layers")
    if scenario.get("checks_layers") is False:
        return []
    if not isinstance(layers, dict):
        return ["- **layers that denied:** ❌ not reported"]
    counts = [f"{_md(name)} {_md(n)}" + ("" if _positive(n) else " ❌") for name, n in layers.items()]
    return ["- **layers that denied:** " + (", ".join(counts) or "❌ none claimed")]


def _md_jobs(report: dict[str, Any]) -> list[str]:
    header = "| " + " | ".join(JOB_COLUMNS) + " |"
    rows = ["| " + " | ".join(_md(c) for c in _job_row(job, ("✅", "❌"))) + " |" for job in _jobs(report)]
    return [header, "|---" * len(JOB_COLUMNS) + "|", *rows] if rows else ["*no jobs reported*"]


def _md_not_denied(report: dict[str, Any]) -> list[str]:
    """One bullet per target, so the summary stays one screen even when every probe failed."""
    bad = _not_denied(report)
    by_target: dict[str, list[str]] = {}
    for r in bad:
        by_target.setdefault(str(r.get("target")), []).append(_md_result(r))
    items = [f"- **{_md(target)}**: " + " · ".join(entries) for target, entries in by_target.items()]
    return ["", f"**Not denied ({len(bad)})**", *items] if bad else []


def _md_result(result: Result) -> str:
    verdict = str(result.get("verdict"))
    channel = str(result.get("channel")).replace("`", "'")  # a backtick would end the code span
    return f"`{channel}` {MD_ICON.get(verdict, '⚠️')} {_md(verdict)}: {_md(result.get('detail'))}"


def _md_errors(part: dict[str, Any]) -> list[str]:
    errors = part.get("errors") or []
    return ["", "**Errors**", *(f"- {_md(e)}" for e in errors)] if errors else []


# --- HTML: its marks are ✓/✗ dingbats, since emoji need a font the viewer may lack ---------------------------

CSS_CLASS = {"DENIED": "denied", "LEAKED": "leaked", "TAMPERED": "leaked", "WRITTEN": "leaked", "EXECUTED": "leaked"}
CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1f2328; }
h1 { padding: 10px 14px; border-radius: 6px; color: #fff; font-size: 22px; margin: 0 0 8px; }
h1.pass { background: #1a7f37; } h1.fail { background: #cf222e; }
h2.scenario { font-size: 19px; margin-top: 34px; border-bottom: 2px solid #57606a; }
h2, h3 { font-size: 16px; margin: 22px 0 6px; border-bottom: 1px solid #d0d7de; padding-bottom: 3px; }
ul.reasons { color: #a40e26; font-weight: 600; margin: 4px 0 12px; }
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


def to_html(report: dict[str, Any]) -> str:
    """One self-contained page: inline CSS, no script, no external URL; hover a cell for its detail."""
    run = _run(report)
    agents, rows = side_by_side(report)
    title = f"boundary {'PASS' if passed(report) else 'FAIL'}: {run.get('runner', '?')} {', '.join(agents)}"
    body = [*_html_verdict(report), _html_header(report), *_html_errors(run)]
    if len(agents) > 1:
        body += ["<h2>Agents side by side</h2>", _table(["scenario", *agents], rows)]
    for name, scenario in _scenarios(report).items():
        body += [f'<h2 class="scenario">{_e(name)}: {_e(scenario.get("title", ""))}</h2>']
        body += [*_html_matrix(scenario), *_html_checks(scenario), *_html_host(scenario), *_html_jobs(scenario)]
        body += [f"<p><i>{_e(not_applicable(scenario))}</i></p>"] if scenario.get("not_applicable") else []
        body += [*_html_not_denied(scenario), *_html_errors(scenario), *_html_all_results(scenario)]
    head = f'<meta charset="utf-8"><title>{_e(title)}</title><style>{CSS}</style>'
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>{head}</head>\n<body>\n' + "\n".join(body) + "\n</body>\n</html>\n"
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(header: list[str], rows: list[list[str]]) -> str:
    """A plain table; every header and cell is text from the report, so every one is escaped here."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_verdict(report: dict[str, Any]) -> list[str]:
    reasons = failures(report)
    if not reasons:
        return ['<h1 class="pass">PASS — every probe denied</h1>']
    return [
        '<h1 class="fail">FAIL</h1>',
        '<ul class="reasons">' + "".join(f"<li>{_e(r)}</li>" for r in reasons) + "</ul>",
    ]


def _html_header(report: dict[str, Any]) -> str:
    runner, pair, host = _stack(report)
    run = _run(report)
    when = f"started {_e(run.get('started', '?'))}, {_num(run.get('duration_s'))} s"
    return (
        f'<p class="meta">runner <b>{_e(runner)}</b>: {_e(pair)}<br>'
        + " · ".join(_e(h) for h in host)
        + f"<br>{when}</p>"
    )


def _html_matrix(report: dict[str, Any]) -> list[str]:
    targets, channels, cells = _matrix(report)
    if not targets:
        return ["<h3>Probes</h3>", "<p><b>no probe results</b></p>"]
    head = "<tr><th>target</th>" + "".join(f"<th>{_e(c)}</th>" for c in channels) + "</tr>"
    rows = [
        f"<tr><th>{_e(t)}</th>" + "".join(_html_cell(t, c, cells.get((t, c))) for c in channels) + "</tr>"
        for t in targets
    ]
    table = f'<table id="matrix"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    return ["<h3>Target × channel</h3>", table, _html_legend()]


def _html_cell(target: str, channel: str, result: Result | None) -> str:
    css = "na" if result is None else CSS_CLASS.get(str(result.get("verdict")), "inconclusive")
    if result is None:
        hover = f"{target} via {channel}: not applicable"
    else:
        hover = f"{target} via {channel}: {result.get('verdict')} ({result.get('layer')}) — {result.get('detail')}"
    attrs = f'class="cell {css}" data-target="{_e(target)}" data-channel="{_e(channel)}" title="{_e(hover)}"'
    return f"<td {attrs}>{_e(_cell_text(result))}</td>"


def _html_legend() -> str:
    swatches = '<span class="denied">layer that denied</span><span class="leaked">LEAKED</span>'
    swatches += '<span class="inconclusive">INCONCLUSIVE</span><span class="na">· not applicable</span>'
    return f'<p class="legend">{swatches}<br>{_e(LEGEND)}. Hover a cell for its detail.</p>'


def _html_checks(report: dict[str, Any]) -> list[str]:
    offered = report.get("offered_tools")
    if isinstance(offered, dict):
        mark = "✓ held" if offered.get("passed") is True else "✗ FAILED"
        parts = _offered_parts(offered)
        tools = _table(["check", *(k for k, _ in parts)], [[mark, *(v for _, v in parts)]])
    else:
        tools = "<p><b>✗ not checked</b></p>"
    return ["<h3>Offered tools</h3>", tools, "<h3>Layers that denied</h3>", _html_layers(report)]


def _html_layers(scenario: dict[str, Any]) -> str:
    layers = scenario.get("layers")
    if scenario.get("checks_layers") is False:
        return "<p>not a layer check: this scenario's probes need not reach every layer</p>"
    if not isinstance(layers, dict):
        return "<p><b>✗ not reported</b></p>"
    rows = [[str(name), str(n), "✓" if _positive(n) else "✗ denied nothing"] for name, n in layers.items()]
    return _table(["layer", "probes denied", "status"], rows) if rows else "<p>no layer claimed</p>"


def _html_jobs(report: dict[str, Any]) -> list[str]:
    rows = [_job_row(job, ("✓", "✗")) for job in _jobs(report)]
    return ["<h3>Jobs</h3>", _table(JOB_COLUMNS, rows) if rows else "<p><b>✗ no jobs reported</b></p>"]


def _html_not_denied(report: dict[str, Any]) -> list[str]:
    bad = _not_denied(report)
    rows = [[str(r.get(k)) for k in ("verdict", "target", "channel", "detail")] for r in bad]
    return (
        [f"<h3>Not denied ({len(bad)})</h3>", _table(["verdict", "target", "channel", "detail"], rows)] if bad else []
    )


def _html_errors(part: dict[str, Any]) -> list[str]:
    errors = part.get("errors") or []
    return ["<h3>Errors</h3>", "<ul>" + "".join(f"<li>{_e(e)}</li>" for e in errors) + "</ul>"] if errors else []


def _html_all_results(report: dict[str, Any]) -> list[str]:
    keys = ["target", "channel", "verdict", "layer", "duration_s", "detail"]
    rows = [[str(r.get(k)) for k in keys] for r in _results(report)]
    summary = f"<summary>All {len(rows)} results, with their detail</summary>"
    return [f"<details>{summary}{_table(keys, rows)}</details>"] if rows else []
