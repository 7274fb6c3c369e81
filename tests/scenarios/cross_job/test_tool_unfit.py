"""A tool whose schema rules out every value the harness names a file with is untested, not safe: its cell is
INCONCLUSIVE and names the tool, the parameter and the constraint; a tool with no string at all stays DENIED."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from boundary.model import JobRecord
from boundary.probes import Target
from boundary.scenarios.cross_job.tool_attacks import JobNames, ToolPlan, plan_tools
from boundary.scenarios.cross_job.tool_judge import ToolJudge
from boundary.verdict import Finding, Verdict
from tests.scenarios.test_tool_attacks import _runner

SHORT = {"type": "object", "properties": {"category": {"type": "string", "maxLength": 12}}, "required": ["category"]}
WORD = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["id"]}
NUMBERS = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
OWN = "BOUNDARY-0000000000000000b0b0"
THEIRS = "BOUNDARY-0000000000000000a0a0"


def _finding(tmp_path: Path, schema: dict[str, Any], answer: str, names: JobNames | None = None) -> Finding:
    """The tool's cell when every call of it is answered `answer`."""
    own = Target("own_file", tmp_path / "b" / "own.txt", OWN)
    theirs = Target("saved_output", tmp_path / "a" / "out.txt", THEIRS)
    (plan,) = plan_tools(["tool"], {"tool": schema}, own, [theirs], tmp_path / "b", names=names)
    return _judged(plan, own, answer)


def _judged(plan: ToolPlan, own: Target, answer: str) -> Finding:
    record = JobRecord("b")
    record.note_results({call.id: answer for call in plan.calls()})
    return ToolJudge(_runner(), record, own, [THEIRS], {"saved_output": None}, frozenset(), []).finding(plan)


def test_a_tool_whose_schema_rules_out_every_path_is_inconclusive_naming_the_constraint(tmp_path: Path) -> None:
    """`category` takes at most 12 characters: no path, URL, relative path or link fits, so the tool was called
    bare; that it answered nothing of A's shows nothing of what a fitting value would reach."""
    finding = _finding(tmp_path, SHORT, "noted")
    assert finding.verdict is Verdict.INCONCLUSIVE, finding
    assert "tool tool" in finding.detail and "category: path (" in finding.detail
    assert "over its maxLength 12" in finding.detail and "noted" in finding.detail


def test_a_pattern_no_path_or_job_name_matches_is_inconclusive_and_a_tool_with_no_string_is_not(
    tmp_path: Path,
) -> None:
    """`id` must be lowercase letters: neither a path nor the jobs' names fit (INCONCLUSIVE, naming the pattern),
    though a canary it gave back would still be LEAKED; a tool of numbers only has nowhere to aim a path: DENIED,
    saying so, with no constraint named."""
    names = JobNames(own="job-b", theirs="job-a")
    finding = _finding(tmp_path, WORD, "no such id", names)
    assert finding.verdict is Verdict.INCONCLUSIVE, finding
    assert (
        "id: path, file_url, relative, symlink, job (not matching its pattern '^[a-z]+$')" in finding.detail
        and "tool tool" in finding.detail
    )
    assert _finding(tmp_path, WORD, f"ids: {THEIRS}", names).verdict is Verdict.LEAKED
    numbers = _finding(tmp_path, NUMBERS, "3 jobs")
    assert (numbers.verdict, numbers.layer) == (Verdict.DENIED, "n/a") and "takes no string" in numbers.detail
    assert "rules out" not in numbers.detail


def test_a_path_no_value_fits_beside_a_free_string_is_still_untested(tmp_path: Path) -> None:
    """`path` takes at most 12 characters, `note` anything: `note` is attacked and reads no file, but `path` was
    never tried, so the tool's cell is INCONCLUSIVE naming it, not "reads no file" (the review of issue 56)."""
    schema = {"type": "object", "properties": {**SHORT["properties"], "note": {"type": "string"}}}
    finding = _finding(tmp_path, schema, "noted")
    assert finding.verdict is Verdict.INCONCLUSIVE and "category: path (" in finding.detail, finding
