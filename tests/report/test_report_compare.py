"""A run against its base report: weaker first (a lost layer, a cell no longer denied or probed), then stronger,
then what merely moved; in every rendering, and failing the run only when asked (`--fail-on weaker`)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from boundary.report.compare import compare, compare_with
from boundary.report.html import to_html
from boundary.report.markdown import to_markdown
from boundary.report.passrule import failures, passed
from boundary.report.terminal import summary_lines
from tests.report.test_render import make_report

CLAIMED = {"agent permission": ["rule prevents"], "runner plugin": ["boundary guard:"], "OS sandbox": ["EPERM"]}


def _reports() -> tuple[dict[str, Any], dict[str, Any]]:
    base = make_report()
    base["run"]["denials"] = {"opencode": copy.deepcopy(CLAIMED)}
    base["scenarios"]["cross_job"]["agent"] = "opencode"  # as a real report has it
    return base, copy.deepcopy(base)


def _cell(report: dict[str, Any], target: str, channel: str) -> dict[str, Any]:
    results = report["scenarios"]["cross_job"]["results"]
    return next(r for r in results if (r["target"], r["channel"]) == (target, channel))


def _changes(base: dict[str, Any], head: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["kind"], c["what"], c["says"]) for c in compare(base, head, "base.json")["changes"]]


def test_the_same_run_twice_changes_nothing() -> None:
    base, head = _reports()
    assert compare(base, head, "base.json")["changes"] == []


def test_a_cell_denied_by_a_later_layer_lost_the_earlier_one_and_is_weaker() -> None:
    """The agent's permission layer stopped refusing; only the OS sandbox held: still PASS, but weaker."""
    base, head = _reports()
    _cell(head, "saved_output", "shell_cat")["layer"] = "OS sandbox"  # was agent permission
    _cell(head, "checkout_file", "shell_ls")["layer"] = "agent permission"  # was the OS sandbox
    assert _changes(base, head) == [
        ("weaker", "saved_output via shell_cat", "lost agent permission: only OS sandbox denied it"),
        ("stronger", "checkout_file via shell_ls", "gained agent permission: it denies before OS sandbox"),
    ]
    assert passed(head)


def test_the_runners_own_order_of_layers_decides_which_was_lost() -> None:
    """A runner that lists its OS sandbox before its guard: the guard denying what the sandbox did is the loss."""
    base, head = _reports()
    head["run"]["denials"]["opencode"] = {"OS sandbox": ["EPERM"], "runner plugin": ["boundary guard:"]}
    base["run"]["denials"] = copy.deepcopy(head["run"]["denials"])
    _cell(head, "checkout_file", "shell_ls")["layer"] = "runner plugin"  # was the OS sandbox
    assert _changes(base, head) == [
        ("weaker", "checkout_file via shell_ls", "lost OS sandbox: only runner plugin denied it")
    ]


def test_verdicts_cells_tools_texts_and_versions_each_say_how_they_changed() -> None:
    base, head = _reports()
    _cell(head, "saved_output", "read")["verdict"] = "LEAKED"
    head["scenarios"]["cross_job"]["results"] = [
        r for r in head["scenarios"]["cross_job"]["results"] if (r["target"], r["channel"]) != ("account_db", "read")
    ]
    _cell(base, "checkout_file", "grep")["verdict"] = "INCONCLUSIVE"
    head["scenarios"]["cross_job"]["offered_tools"]["offered"].append("webfetch_v2")
    head["run"]["denials"]["opencode"]["OS sandbox"] = ["EPERM", "Read-only file system"]
    del head["run"]["denials"]["opencode"]["runner plugin"]
    head["run"]["versions"]["opencode"] = "1.19.0"
    kinds = [(kind, what) for kind, what, _ in _changes(base, head)]
    assert kinds == [  # the base failed too (an INCONCLUSIVE cell): no change of outcome
        ("weaker", "probes"),
        ("weaker", "saved_output via read"),
        ("weaker", "account_db via read"),
        ("weaker", "offered tools"),
        ("weaker", "layer runner plugin"),
        ("stronger", "checkout_file via grep"),
        ("moved", "OS sandbox denial texts"),
        ("moved", "opencode version"),
    ]


def test_every_rendering_shows_the_changes_first_and_only_fail_on_weaker_fails() -> None:
    base, head = _reports()
    _cell(head, "saved_output", "shell_cat")["layer"] = "OS sandbox"
    head["comparison"] = compare(base, head, "nightly.json")
    terminal = "\n".join(summary_lines(head))
    assert "against nightly.json (started 2026-11-30T11:09:38Z): 1 weaker, 0 stronger, 0 moved" in terminal
    assert terminal.index("WEAKER") < terminal.index("== cross_job")
    assert "lost agent permission" in to_markdown(head) and "lost agent permission" in to_html(head)
    assert passed(head)  # a warning, by default
    head["comparison"] = compare(base, head, "nightly.json", fail_on="weaker")
    assert failures(head) == [
        "weaker than the base: cross_job: saved_output via shell_cat: agent permission → OS sandbox "
        "(lost agent permission: only OS sandbox denied it)"
    ]


def test_no_base_report_is_said_in_one_line_and_nothing_fails(tmp_path: Path) -> None:
    _, head = _reports()
    head["comparison"] = compare_with(tmp_path / "none.json", head, fail_on="weaker")
    assert passed(head)
    assert f"against {tmp_path / 'none.json'}: no base report there — nothing compared" in summary_lines(head)


def test_boundary_report_against_exits_1_on_weaker_only_when_asked(tmp_path: Path) -> None:
    base, head = _reports()
    _cell(head, "saved_output", "shell_cat")["layer"] = "OS sandbox"
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))

    def report(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "boundary.cli", "report", str(tmp_path / "head.json"), *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    warned = report("--against", str(tmp_path / "base.json"), "--json", str(tmp_path / "out.json"))
    assert warned.returncode == 0, warned.stderr
    assert json.loads((tmp_path / "out.json").read_text())["comparison"]["changes"][0]["kind"] == "weaker"
    failed = report("--against", str(tmp_path / "base.json"), "--fail-on", "weaker")
    assert failed.returncode == 1 and "weaker than the base" in failed.stdout
    refused = report("--fail-on", "weaker")
    assert refused.returncode == 2 and "--against BASE.json" in refused.stderr


def test_a_cell_a_layer_denied_that_now_names_no_layer_is_weaker() -> None:
    """`os` → `ok` (nothing found) or `norun` (planted code never ran): no layer is seen denying it any more, which
    is weaker, never a mere move."""
    base, head = _reports()
    _cell(head, "saved_output", "shell_ls")["layer"] = "n/a"  # was the OS sandbox
    _cell(head, "account_db", "read")["layer"] = "not run"  # was the runner plugin
    assert _changes(base, head) == [
        ("weaker", "saved_output via shell_ls", "lost OS sandbox: no layer seen denying it now (n/a)"),
        ("weaker", "account_db via read", "lost runner plugin: no layer seen denying it now (not run)"),
    ]


def test_the_verdict_line_of_a_pass_says_what_got_weaker(tmp_path: Path) -> None:
    """`boundary report HEAD --against BASE` prints one line: a PASS with a weaker change says the change (a
    warning: still exit 0, as documented); with `--fail-on weaker` it is a FAIL that names it once."""
    base, head = _reports()
    _cell(head, "saved_output", "shell_cat")["layer"] = "OS sandbox"
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    argv = [sys.executable, "-m", "boundary.cli", "report", str(tmp_path / "head.json")]
    argv += ["--against", str(tmp_path / "base.json")]
    change = "cross_job: saved_output via shell_cat: agent permission → OS sandbox (lost agent permission: only OS"
    warned = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert warned.returncode == 0, warned.stderr
    assert warned.stdout.startswith(f"PASS — every check held, but 1 change weaker than the base {tmp_path}/base.json")
    assert change in warned.stdout
    failed = subprocess.run([*argv, "--fail-on", "weaker"], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1 and failed.stdout.startswith("FAIL — weaker than the base: ")
    assert failed.stdout.count(change) == 1, failed.stdout


def test_a_denied_cell_that_rests_on_no_attack_now_is_weaker() -> None:
    """Same layer, same verdict: an attack that was made and came to nothing (`controlled`), now none made at all
    (`nothing_to_aim`: nothing found to aim at), is weaker; a refusal that now ended the job merely moved."""
    base, head = _reports()
    _cell(base, "saved_output", "job_output")["proof"] = "controlled"
    _cell(head, "saved_output", "job_output")["proof"] = "nothing_to_aim"
    _cell(base, "saved_output", "read")["proof"] = "refused"
    _cell(head, "saved_output", "read")["proof"] = "ended_refusal"
    assert _changes(base, head) == [
        ("weaker", "saved_output via job_output", "no attack was made now: nothing_to_aim (it was controlled)"),
        ("moved", "saved_output via read", "it rests on ended_refusal now (it was refused)"),
    ]
