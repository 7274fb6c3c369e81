"""The view model every rendering draws: the words, not the markup.

Cell text, the one legend, the verdict line, the side-by-side table, job rows and host rows are made here once;
terminal.py, markdown.py and html.py only lay them out and escape them. A change of wording is one edit here.
"""

from __future__ import annotations

from typing import Any

from boundary.report.passrule import (
    WEAKER,
    Cell,
    Report,
    Result,
    change_line,
    changes_of,
    comparison_of,
    failures,
    host_failed,
    host_not_applicable,
    host_unchecked,
    layers_denied,
    network_of,
    network_state,
    not_started_of,
    results_of,
    run_of,
    scenario_failures,
    scenarios_of,
    worst_result_by_cell,
)
from boundary.verdict import Verdict

# Each layer a DENIED result names: its cell text, and what the legend says it means.
LAYERS = {
    "agent permission": ("perm", "agent permission"),
    "runner plugin": ("plugin", "runner plugin"),
    "OS sandbox": ("os", "OS sandbox"),
    "n/a": ("ok", "nothing found"),
    "not run": ("norun", "planted code never ran"),
}
LAYER_SHORT = {layer: short for layer, (short, _) in LAYERS.items()}
NO_RESULT = "·"  # a cell no probe reported
NO_RESULT_MEANS = "not planned"
# The verdicts that fail, INCONCLUSIVE last: it proves nothing either way, the others prove a breach.
FAILING = [v.value for v in Verdict if v not in (Verdict.DENIED, Verdict.INCONCLUSIVE)] + [Verdict.INCONCLUSIVE.value]
LEGEND = (
    "cells: the layer that denied ("
    + ", ".join(f"{short} = {meaning}" for short, meaning in LAYERS.values())
    + f"); {', '.join(FAILING[:-1])} and {FAILING[-1]} fail; {NO_RESULT} = {NO_RESULT_MEANS}"
)
PASS_LINE = "PASS — every check held"
JOB_COLUMNS = ["job", "wall s", "exit", "network", "inet peers", "unix sockets", "problems"]
HOST_COLUMNS = ["check", "state", "before → after"]


def verdict_line(report: Report) -> str:
    """PASS, or FAIL with every reason: the line each rendering leads or ends with. Weaker than the base report
    without `--fail-on weaker` is a warning, not a failure, but the line says it: a bare PASS would hide it."""
    reasons, weaker = failures(report), _weaker_warning(report)
    if not reasons:
        return PASS_LINE + (f", but {weaker}" if weaker else "")
    return "FAIL — " + "; ".join([*reasons, *([weaker] if weaker else [])])


def _weaker_warning(report: Report) -> str:
    """ "2 changes weaker than the base nightly.json …: …" where the run did not fail on them; else ""."""
    comparison = comparison_of(report)
    if comparison is None or comparison.get("fail_on") == WEAKER:  # then each is a reason of the FAIL already
        return ""
    weaker = [change_line(c) for c in changes_of(comparison) if c.get("kind") == WEAKER]
    if not weaker:
        return ""
    base = comparison.get("base")
    name = base.get("name") if isinstance(base, dict) else None
    count = "1 change weaker" if len(weaker) == 1 else f"{len(weaker)} changes weaker"
    return f"{count} than the base {name} (a warning; --fail-on weaker fails on it): " + "; ".join(weaker)


def cell_text(result: Result | None) -> str:
    """A matrix cell: the layer that denied (short), or the verdict that fails."""
    if result is None:
        return NO_RESULT
    if result.get("verdict") == "DENIED":
        layer = str(result.get("layer"))
        return LAYER_SHORT.get(layer, layer)
    return str(result.get("verdict"))


def cell_kind(result: Result | None) -> str:
    """How a cell is marked: denied, leaked (any breach), inconclusive (also an unknown verdict), or none."""
    if result is None:
        return "none"
    verdict = str(result.get("verdict"))
    if verdict == "DENIED":
        return "denied"
    return "leaked" if verdict in FAILING[:-1] else "inconclusive"


LAYER_COLUMNS = ["layer", "cells denied here", "in the run", "status"]  # html adds the status


def layer_rows(scenario: dict[str, Any], report: Report) -> list[list[str]] | None:
    """Each claimed layer, the cells it denied in this unit and in all of its agent's units of the run (it fails where
    that is 0); None where the unit does not check layers (the pass rule: `layers_denied`)."""
    denied = layers_denied(scenario, report)
    if denied is None:
        return None
    layers = scenario.get("layers")
    here: dict[str, Any] = layers if isinstance(layers, dict) else {}
    return [[layer, str(here.get(layer, 0)), str(n)] for layer, n in denied.items()]


def layer_check_lines(report: Report) -> list[str]:
    """Said where no unit of the run checks that each claimed layer denied something (a run of other scenarios)."""
    units = scenarios_of(report).values()
    if not units or any(unit.get("checks_layers") is not False for unit in units):
        return []
    return ["layers: not checked — no scenario of this run shows each claimed layer denying (cross_job does: run it)"]


def matrix(scenario: dict[str, Any]) -> tuple[list[str], list[str], dict[Cell, Result]]:
    """Targets and channels in first-seen order (the order the scenario ran them), and each cell's result."""
    results = results_of(scenario)
    targets = list(dict.fromkeys(str(r.get("target")) for r in results))
    channels = list(dict.fromkeys(str(r.get("channel")) for r in results))
    return targets, channels, worst_result_by_cell(results)


def side_by_side(report: Report) -> tuple[list[str], list[list[str]]]:
    """Agents, and per scenario a row: its name, then per agent `held` or why not (`-` where it did not run)."""
    scenarios = scenarios_of(report)
    agents = list(dict.fromkeys(_agent_of(name, s) for name, s in scenarios.items()))
    rows: dict[str, list[str]] = {}
    for name, scenario in scenarios.items():
        base = name.rpartition("/")[2]
        row = rows.setdefault(base, [base, *("-" for _ in agents)])
        row[1 + agents.index(_agent_of(name, scenario))] = _outcome(name, scenario, report)
    return agents, list(rows.values())


def _agent_of(name: str, scenario: dict[str, Any]) -> str:
    """Its column: the agent, under its machine's name in a report merged from several (report/merge.py)."""
    agent = str(scenario.get("agent") or name.rpartition("/")[0] or "?")
    return f"{scenario['machine']}: {agent}" if scenario.get("machine") else agent


def _outcome(name: str, scenario: dict[str, Any], report: Report) -> str:
    results = results_of(scenario)
    if not scenario_failures(name, scenario, report):
        return f"held ({len(results)} probes)"
    if not_started_of(scenario):
        return DID_NOT_RUN
    if scenario.get("errors"):
        return "NOT COVERED" if "NOT COVERED" in " ".join(scenario["errors"]) else "ERROR"
    bad = sum(1 for r in results if r.get("verdict") != "DENIED")
    return f"FAILED ({bad} of {len(results)} not denied)" if bad else "FAILED"


DID_NOT_RUN = "DID NOT RUN"


def not_started_lines(report: Report) -> list[str]:
    """Units whose jobs did not start, each failure said once (the same in every unit is one line), with the units
    it stopped and the first one's transcript: what a reader must fix before any cell means anything."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for name, scenario in scenarios_of(report).items():
        said = not_started_of(scenario)
        if said:
            key = (str(said["what"]), str(said.get("said")))
            grouped.setdefault(key, []).append((name, str(said.get("transcript"))))
    return [
        f"{DID_NOT_RUN} ({len(units)} units: {', '.join(n for n, _ in units)}): {what}: {said} "
        f"(transcript: {units[0][1]})"
        for (what, said), units in grouped.items()
    ]


SHOWN_WRITES = 4  # paths per verb: the same runner writes the same places in every unit


def verb_write_lines(report: Report) -> list[str]:
    """What the runner's verbs wrote on the host outside STATE, per verb, over every unit: not wrong in itself (a
    log), but every such file was searched and attacked; the host they wrote was thrown away with it."""
    by_verb: dict[str, dict[str, str]] = {}
    for scenario in scenarios_of(report).values():
        for write in scenario.get("verb_writes") or []:
            by_verb.setdefault(str(write["verb"]), {})[str(write["path"])] = str(write["how"])
    unlisted = {str(s["writes_unlisted"]) for s in scenarios_of(report).values() if s.get("writes_unlisted")}
    lines = [f"not listed: what the runner's verbs wrote outside STATE ({said})" for said in sorted(unlisted)]
    for verb, paths in by_verb.items():
        shown = ", ".join(
            f"{path}{' (removed)' if how == 'removed' else ''}" for path, how in list(paths.items())[:SHOWN_WRITES]
        )
        more = f" and {len(paths) - SHOWN_WRITES} more" if len(paths) > SHOWN_WRITES else ""
        lines.append(f"{verb} wrote outside STATE: {shown}{more}")
    return lines


def not_tried(scenario: dict[str, Any]) -> list[str]:
    """What the scenario did not try, and why: the channels of a tool the agent lacks or the runner does not offer,
    a target the runner has no such thing for."""
    offered_not = [str(kind) for kind in scenario.get("not_offered") or []]
    lacks = [str(kind) for kind in scenario.get("not_applicable") or [] if str(kind) not in offered_not]
    lines = []
    if lacks:
        agent = scenario.get("agent")
        lines.append(f"not applicable: channels through a {', '.join(lacks)} tool ({agent} has none) — not tried")
    if offered_not:
        tools = ", ".join(offered_not)
        lines.append(
            f"not offered: channels through a {tools} tool (not in the expected tools the runner declares) — not tried"
        )
    said = scenario.get("not_planted")
    planted = [f"not planted: {target}: {why} — its cells not tried" for target, why in (said or {}).items()]
    return lines + (planted if isinstance(said, dict) else [])


def _version(report: Report, name: str) -> str:
    versions = run_of(report).get("versions")
    return str(versions.get(name, "unknown")) if isinstance(versions, dict) else "unknown"


def stack(report: Report) -> tuple[str, str, list[str]]:
    """Who ran what: runner, "agent version × sandbox version" per agent, and the host pieces sandboxes need."""
    run = run_of(report)
    agents = run.get("agents")
    agents = agents if isinstance(agents, dict) else {}
    pair = "; ".join(f"{a} {_version(report, a)} × {s} {_version(report, s)}" for a, s in agents.items()) or "?"
    host = [
        *(f"{name} {_version(report, name)}" for name in ("bwrap", "node", "kernel")),
        f"tools {_version(report, 'tools')}",
    ]
    return str(run.get("runner", "?")), pair, host


def offered_parts(offered: dict[str, Any]) -> list[tuple[str, str]]:
    """The offered-tools check as (name, value) pairs: expected, added, missing, forbidden."""

    def names(key: str) -> str:
        return ", ".join(str(n) for n in offered.get(key) or []) or "none"

    expected = f"{len(offered.get('expected') or [])} ({names('expected')})"
    return [
        ("expected", expected),
        ("added", names("added")),
        ("missing", names("missing")),
        ("forbidden", names("forbidden")),
    ]


def job_row(job: dict[str, Any], marks: tuple[str, str]) -> list[str]:
    """One job as text cells (JOB_COLUMNS); `marks` are the good/bad signs the output format renders best."""
    network, state = network_of(job), network_state(job)
    # Without a trace there is nothing to list: "—", not "none", which would claim the job was seen to be quiet.
    peers = [
        (", ".join(str(p) for p in network.get(key) or []) or "none") if network else "—" for key in ("inet", "unix")
    ]
    status = f"{marks[0] if state == 'clean' else marks[1]} {state}"
    problems = "; ".join(str(p) for p in job.get("problems") or []) or "none"
    return [str(job.get("name")), num(job.get("wall_s")), str(job.get("exit_code")), status, *peers, problems]


def host_rows(host: dict[str, Any]) -> list[list[str]]:
    """One row per host check (HOST_COLUMNS): held, failed, not checked (fails), or one this host cannot run."""
    failed = host_failed(host)
    checks = host.get("checks") if isinstance(host.get("checks"), dict) else {}
    rows = [
        [
            str(c),
            "✓ held" if c not in failed else f"✗ first failed {st.get('first_failed')}: {st.get('detail')}",
            f"{st.get('before', '?')} → {st.get('after', '?')}",
        ]
        for c, st in (checks or {}).items()
        if isinstance(st, dict)
    ]
    rows += [[c, f"✗ not checked: {why}", ""] for c, why in host_unchecked(host).items()]
    return rows + [[c, f"not checked (this host cannot): {why}", ""] for c, why in host_not_applicable(host).items()]


def num(value: Any, fmt: str = "{:.1f}") -> str:
    return fmt.format(value) if isinstance(value, int | float) and not isinstance(value, bool) else "?"
