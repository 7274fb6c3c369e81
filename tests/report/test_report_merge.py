"""Shards of one run (a CI matrix) joined into one report; shards of different runs refused, naming them; a shard
missing from the matrix fails the merged report, naming it."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from boundary.report.merge import MergeError, merge
from boundary.report.passrule import failures, passed
from boundary.report.record import SHARD_ENV, RunRecord, shard_place
from boundary.report.terminal import summary_lines
from boundary.report.view import side_by_side
from tests.report.test_render import make_report


def _shard(machine: str, agent: str = "opencode", kernel: str = "6.1", place: str = "1/1") -> dict[str, Any]:
    """`make_report`'s run as one machine's shard of `agent`, shard I of the matrix's N (`place`: "I/N")."""
    report = make_report()
    report["run"]["shard"] = shard_place(place)
    scenario = report["scenarios"].pop("cross_job")
    scenario["agent"] = agent
    report["scenarios"] = {f"{agent}/cross_job": scenario}
    report["run"] |= {"planned_scenarios": [f"{agent}/cross_job"], "agents": {agent: "srt"}}
    report["run"]["host"] = {"name": machine, "kernel": kernel, "machine": "x86_64"}
    report["run"]["versions"] |= {"boundary": "0.1.0+gabc", agent: "1.0", "kernel": kernel}
    return report


def test_three_shards_from_two_machines_make_one_report_with_a_column_per_machine_and_agent() -> None:
    shards = [
        ("a.json", _shard("runner-a", place="1/3")),
        ("b.json", _shard("runner-b", kernel="6.8", place="2/3")),
        ("c.json", _shard("runner-a", "claude", place="3/3")),
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
    bad = _shard("runner-b", place="2/2")
    bad["scenarios"]["opencode/cross_job"]["results"][0]["verdict"] = "LEAKED"
    merged = merge([("a.json", _shard("runner-a", place="1/2")), ("b.json", bad)])
    assert failures(merged) == ["runner-b @ opencode/cross_job: 1 of 38 probes not denied"]


def test_shards_of_one_machine_split_by_agent_keep_their_names() -> None:
    merged = merge([("a.json", _shard("ci", place="1/2")), ("b.json", _shard("ci", "codex", place="2/2"))])
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
    other = _shard("runner-b", place="2/2")
    change(other["run"])
    with pytest.raises(MergeError, match=re.escape(said)):
        merge([("a.json", _shard("runner-a", place="1/2")), ("b.json", other)])


def test_a_unit_in_two_shards_is_refused() -> None:
    with pytest.raises(MergeError, match=r"unit opencode/cross_job is in two shards \(a.json and b.json\)"):
        merge([("a.json", _shard("ci", place="1/2")), ("b.json", copy.deepcopy(_shard("ci", place="2/2")))])


def test_boundary_report_merge_writes_the_merged_json(tmp_path: Path) -> None:
    for name, machine, place in (("a", "runner-a", "1/2"), ("b", "runner-b", "2/2")):
        (tmp_path / f"{name}.json").write_text(json.dumps(_shard(machine, place=place)))
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


# --- every shard of the matrix, or a failing report naming the missing ones --------------------------------------


def test_a_shard_missing_from_the_matrix_fails_the_merged_report_naming_it() -> None:
    """Shard 2 of 3 timed out before writing its report: the two present hold, and the merged report still fails,
    naming it (its units are planned in no report present, so nothing else would notice)."""
    merged = merge([("a.json", _shard("ci", place="1/3")), ("c.json", _shard("ci", "claude", place="3/3"))])
    assert failures(merged) == [
        "error: shard 2 of 3 not reported: expected a report from each of the matrix's 3 shards, got 1 (a.json), "
        "3 (c.json). Its job failed or timed out before writing one, so its units are in no report: see its log, "
        "and run it again"
    ]
    assert [s["shard"] for s in merged["run"]["shards"]] == [{"index": 1, "of": 3}, {"index": 3, "of": 3}]


def test_shards_that_do_not_say_their_place_fail_the_merged_report() -> None:
    """Without `run.shard` no merge can tell a missing shard: the merged report fails, naming the shards and the fix."""
    unplaced = _shard("ci", "codex")
    del unplaced["run"]["shard"]
    merged = merge([("a.json", _shard("ci", place="1/2")), ("b.json", unplaced)])
    assert len(failures(merged)) == 1
    assert failures(merged)[0].startswith("error: b.json: no shard place (run.shard, I of N)")
    assert "boundary run --shard I/N" in failures(merged)[0]


@pytest.mark.parametrize(
    ("places", "said"),
    [
        (("1/2", "2/3"), "different matrices (N of shard I/N): 2 in a.json; 3 in b.json"),
        (("2/2", "2/2"), "shard 2 of 2 is in two reports (a.json and b.json): expected one"),
    ],
)
def test_shards_of_different_matrices_or_of_one_place_are_refused(places: tuple[str, str], said: str) -> None:
    with pytest.raises(MergeError, match=re.escape(said)):
        merge([("a.json", _shard("ci", place=places[0])), ("b.json", _shard("ci", "codex", place=places[1]))])


def test_a_run_records_its_place_in_the_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    """`boundary run --shard 2/4` hands the place to the suite, whose report says it; no place, no key."""
    assert "shard" not in RunRecord("reference", {"opencode": "srt"}).as_dict()["run"]
    monkeypatch.setenv(SHARD_ENV, "2/4")
    assert RunRecord("reference", {"opencode": "srt"}).as_dict()["run"]["shard"] == {"index": 2, "of": 4}
    for wrong in ("0/4", "5/4", "2", "two/four"):
        with pytest.raises(ValueError, match="expected I/N"):
            shard_place(wrong)


def test_boundary_report_merge_of_an_incomplete_matrix_exits_1_naming_the_missing_shard(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(_shard("ci", place="1/2")))
    argv = [sys.executable, "-m", "boundary.cli", "report", "--merge", str(tmp_path / "a.json")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("FAIL — error: shard 2 of 2 not reported"), done.stdout
