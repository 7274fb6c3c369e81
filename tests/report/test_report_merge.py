"""Shards of one run (a CI matrix) joined into one report; shards of different runs refused, naming them."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from boundary.report.merge import MergeError, merge
from boundary.report.passrule import failures, passed
from boundary.report.terminal import summary_lines
from boundary.report.view import side_by_side
from tests.report.test_render import make_report


def _shard(machine: str, agent: str = "opencode", kernel: str = "6.1") -> dict[str, Any]:
    """`make_report`'s run as one machine's shard of `agent`."""
    report = make_report()
    scenario = report["scenarios"].pop("cross_job")
    scenario["agent"] = agent
    report["scenarios"] = {f"{agent}/cross_job": scenario}
    report["run"] |= {"planned_scenarios": [f"{agent}/cross_job"], "agents": {agent: "srt"}}
    report["run"]["host"] = {"name": machine, "kernel": kernel, "machine": "x86_64"}
    report["run"]["versions"] |= {"boundary": "0.1.0+gabc", agent: "1.0", "kernel": kernel}
    return report


def test_three_shards_from_two_machines_make_one_report_with_a_column_per_machine_and_agent() -> None:
    shards = [
        ("a.json", _shard("runner-a")),
        ("b.json", _shard("runner-b", kernel="6.8")),
        ("c.json", _shard("runner-a", "claude")),
    ]
    merged = merge(shards)
    assert list(merged["scenarios"]) == [
        "runner-a @ opencode/cross_job",
        "runner-b @ opencode/cross_job",
        "runner-a @ claude/cross_job",
    ]
    assert merged["run"]["versions"]["kernel"] == "6.1 (runner-a); 6.8 (runner-b)"
    assert merged["run"]["agents"] == {"opencode": "srt", "claude": "srt"}
    assert passed(merged)
    columns, rows = side_by_side(merged)
    assert columns == ["runner-a: opencode", "runner-b: opencode", "runner-a: claude"]
    assert rows == [["cross_job", "held (38 probes)", "held (38 probes)", "held (38 probes)"]]
    assert any(line.startswith("cross_job  held (38 probes)") for line in summary_lines(merged))


def test_a_failing_shard_fails_the_merged_report_under_its_machines_name() -> None:
    bad = _shard("runner-b")
    bad["scenarios"]["opencode/cross_job"]["results"][0]["verdict"] = "LEAKED"
    merged = merge([("a.json", _shard("runner-a")), ("b.json", bad)])
    assert failures(merged) == ["runner-b @ opencode/cross_job: 1 of 38 probes not denied"]


def test_shards_of_one_machine_split_by_agent_keep_their_names() -> None:
    merged = merge([("a.json", _shard("ci")), ("b.json", _shard("ci", "codex"))])
    assert list(merged["scenarios"]) == ["opencode/cross_job", "codex/cross_job"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (
            lambda run: run["versions"].update(boundary="0.2.0"),
            "different harness (boundary version): 0.1.0+gabc in a.json; 0.2.0 in b.json",
        ),
        (lambda run: run.update(runner="mine"), "different runner: reference in a.json; mine in b.json"),
        (
            lambda run: run["versions"].update(opencode="1.1"),
            "different opencode version: 1.0 in a.json; 1.1 in b.json",
        ),
    ],
)
def test_shards_of_different_runs_are_refused_naming_them(change: Any, said: str) -> None:
    other = _shard("runner-b")
    change(other["run"])
    with pytest.raises(MergeError, match=said.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        merge([("a.json", _shard("runner-a")), ("b.json", other)])


def test_a_unit_in_two_shards_is_refused() -> None:
    with pytest.raises(MergeError, match=r"unit opencode/cross_job is in two shards \(a.json and b.json\)"):
        merge([("a.json", _shard("ci")), ("b.json", copy.deepcopy(_shard("ci")))])


def test_boundary_report_merge_writes_the_merged_json(tmp_path: Path) -> None:
    for name, machine in (("a", "runner-a"), ("b", "runner-b")):
        (tmp_path / f"{name}.json").write_text(json.dumps(_shard(machine)))
    argv = [
        sys.executable,
        "-m",
        "boundary.cli",
        "report",
        "--merge",
        str(tmp_path / "a.json"),
        str(tmp_path / "b.json"),
    ]
    done = subprocess.run([*argv, "--json", str(tmp_path / "all.json")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "all.json").read_text())
    assert merged["verdict"]["passed"] is True and len(merged["scenarios"]) == 2
