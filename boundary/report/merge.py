"""One report from shards: a CI matrix (agent × host, or any split) runs boundary once per shard, and its last job
joins their JSON reports into one, rendered as any report is.

Shards must have run the same harness, the same runner, and the same agent and sandbox versions (a report mixing
them would be no one run's claim): a merge that would is refused, naming the shards. Shards from several machines
keep each unit apart under its machine's name (`runner-a @ opencode/cross_job`), and the agents-side-by-side table
gets a column per machine and agent.

The units a merged report must hold come from the shards present, so a shard that never wrote its report (its job
timed out) would vanish with its units, and the rest read PASS. Each shard therefore says which of the matrix's N
it is (`run.shard`, `boundary run --shard I/N`); a merged report without every one of the N fails, naming those
missing, and so does one whose shards do not say it (nothing could then tell a missing one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from boundary.report.passrule import Report, run_of, scenarios_of
from boundary.report.record import load


class MergeError(ValueError):
    """Shards that are not parts of one run: what differs, and in which files."""


def merge_files(paths: list[Path]) -> Report:
    """`merge` of the JSON reports at `paths`, each named by its path."""
    return merge([(str(path), load(path)) for path in paths])


def merge(shards: list[tuple[str, Report]]) -> Report:
    """The shards (name, report) as one report; MergeError where they are not parts of one run."""
    if not shards:
        raise MergeError("no shard to merge: expected the JSON reports of each shard")
    _same(shards, "harness (boundary version)", lambda run: _versions(run).get("boundary", "unknown"))
    _same(shards, "runner", lambda run: str(run.get("runner")))
    for agent, sandbox in {k: v for _, r in shards for k, v in _agents(run_of(r)).items()}.items():
        having = [(name, r) for name, r in shards if agent in _agents(run_of(r))]
        _same(having, f"{agent} version", lambda run, a=agent: _versions(run).get(a, "unknown"))
        _same(having, f"{sandbox} version", lambda run, s=sandbox: _versions(run).get(s, "unknown"))
        _same(having, f"{agent}'s claimed layers", lambda run, a=agent: repr(_denials(run).get(a)))
    machines = list(dict.fromkeys(_machine(report) for _, report in shards))
    scenarios = _scenarios(shards, prefixed=len(machines) > 1)
    merged = {"run": _run(shards, machines, scenarios), "scenarios": scenarios}
    merged["run"]["errors"][:0] = _not_every_shard(shards)
    return merged


def _not_every_shard(shards: list[tuple[str, Report]]) -> list[str]:
    """Why the shards are not the whole matrix (each a failure of the merged run); empty when every one of its N is
    here. MergeError for shards of different matrices, or two of one place."""
    places = {name: _place(report) for name, report in shards}
    placed = {name: place for name, place in places.items() if place is not None}
    if len(placed) < len(places):
        return [
            f"{', '.join(name for name in places if name not in placed)}: no shard place (run.shard, I of N): expected "
            "each shard to say which of the matrix's N it is, so that a missing one is named; without it a shard that "
            "wrote no report could not be told. Run each with `boundary run --shard I/N` (the Action does for each "
            "job of a matrix)"
        ]
    _same(shards, "matrices (N of shard I/N)", lambda run: str((run.get("shard") or {}).get("of")))
    seen: dict[int, str] = {}
    for name, (index, total) in placed.items():
        if index in seen:
            raise MergeError(f"shard {index} of {total} is in two reports ({seen[index]} and {name}): expected one")
        seen[index] = name
    total = next(iter(placed.values()))[1]
    got = ", ".join(f"{index} ({seen[index]})" for index in sorted(seen))
    return [
        f"shard {index} of {total} not reported: expected a report from each of the matrix's {total} shards, got "
        f"{got}. Its job failed or timed out before writing one, so its units are in no report: see its log, and "
        "run it again"
        for index in range(1, total + 1)
        if index not in seen
    ]


def _place(report: Report) -> tuple[int, int] | None:
    """(I, N) of a shard's `run.shard` ({"index": I, "of": N}); None where it says none, or nothing valid."""
    shard = run_of(report).get("shard")
    if not isinstance(shard, dict):
        return None
    index, total = shard.get("index"), shard.get("of")
    if type(index) is not int or type(total) is not int or not 1 <= index <= total:  # a bool is no place either
        return None
    return index, total


def _same(shards: list[tuple[str, Report]], what: str, value: Any) -> None:
    seen: dict[str, list[str]] = {}
    for name, report in shards:
        seen.setdefault(value(run_of(report)), []).append(name)
    if len(seen) > 1:
        each = "; ".join(f"{v} in {', '.join(names)}" for v, names in seen.items())
        raise MergeError(f"the shards ran different {what}: {each}. Merge shards of one run only")


def _scenarios(shards: list[tuple[str, Report]], prefixed: bool) -> dict[str, dict[str, Any]]:
    """Every shard's units; from several machines, each under its machine's name. A unit in two shards is refused:
    which of the two would the merged report believe?"""
    merged: dict[str, dict[str, Any]] = {}
    came_from: dict[str, str] = {}
    for name, report in shards:
        machine = _machine(report)
        for unit, scenario in scenarios_of(report).items():
            key = f"{machine} @ {unit}" if prefixed else unit
            if key in merged:
                raise MergeError(f"unit {key} is in two shards ({came_from[key]} and {name}): expected each once")
            merged[key] = {**scenario, "machine": machine} if prefixed else scenario
            came_from[key] = name
    return merged


def _run(shards: list[tuple[str, Report]], machines: list[str], scenarios: dict[str, Any]) -> dict[str, Any]:
    runs = [run_of(report) for _, report in shards]
    prefixed = len(machines) > 1
    planned = [
        f"{_machine(report)} @ {unit}" if prefixed else unit
        for _, report in shards
        for unit in run_of(report).get("planned_scenarios") or []
    ]
    return {
        "versions": _merged_versions(shards),
        "host": {"name": ", ".join(machines), "kernel": _one_or_each(runs, "kernel"), "machine": "merged"},
        "runner": runs[0].get("runner"),
        "agents": {k: v for run in runs for k, v in _agents(run).items()},
        "denials": {k: v for run in runs for k, v in _denials(run).items()},
        "started": min(str(run.get("started") or "?") for run in runs),
        "duration_s": max((run.get("duration_s") or 0 for run in runs), default=0),
        "planned_scenarios": planned or list(scenarios),
        "errors": [f"{name}: {error}" for name, report in shards for error in run_of(report).get("errors") or []],
        "shards": [
            {
                "name": name,
                "machine": _machine(report),
                "started": run_of(report).get("started"),
                "shard": run_of(report).get("shard"),
            }
            for name, report in shards
        ],
    }


def _merged_versions(shards: list[tuple[str, Report]]) -> dict[str, str]:
    """Every version the shards agree on as it is; a machine's own that differ, each with its machine's name."""
    names = list(dict.fromkeys(k for _, report in shards for k in _versions(run_of(report))))
    merged = {}
    for name in names:
        each = {_machine(report): _versions(run_of(report)).get(name) for _, report in shards}
        values = set(filter(None, each.values()))
        merged[name] = values.pop() if len(values) == 1 else "; ".join(f"{v} ({m})" for m, v in each.items() if v)
    return merged


def _one_or_each(runs: list[dict[str, Any]], key: str) -> str:
    values = list(dict.fromkeys(str((run.get("host") or {}).get(key)) for run in runs))
    return values[0] if len(values) == 1 else "; ".join(values)


def _machine(report: Report) -> str:
    host = run_of(report).get("host")
    return str(host.get("name")) if isinstance(host, dict) and host.get("name") else "unknown machine"


def _versions(run: dict[str, Any]) -> dict[str, str]:
    versions = run.get("versions")
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


def _agents(run: dict[str, Any]) -> dict[str, str]:
    agents = run.get("agents")
    return {str(k): str(v) for k, v in agents.items()} if isinstance(agents, dict) else {}


def _denials(run: dict[str, Any]) -> dict[str, Any]:
    denials = run.get("denials")
    return denials if isinstance(denials, dict) else {}
