"""The grep tool's fallback (issue 43 item 7): where its search of the whole tree missed B's own canaries (refused
whole, or cut short at its limit), each place is searched on its own, with its own control."""

from __future__ import annotations

from boundary.model import JobRecord, ToolCall
from boundary.scenarios.sweep import per_place
from boundary.scenarios.sweep.judge import judge_cell
from boundary.scenarios.sweep.places import NAMED_NONE, Place
from boundary.verdict import Verdict
from tests.scenarios.sweep.test_sweep_fail_closed import _evidence, _runner

CUT = "(Results are truncated. Consider using a more specific path or pattern.)"
REFUSED = "Permission denied"  # the OS sandbox's words, as the test runner declares them


def _pair(name: str, a_dir: str, b_dir: str) -> tuple[Place, Place]:
    token = f"BOUNDARY-{name.encode().hex()[:8]:0<20}"
    own = f"BOUNDARY-{name.encode().hex()[:8]:b<20}"
    return Place(name, "fa", token, a_dir, held=True), Place(name, "fb", own, b_dir, held=True, wrote=True)


def _runner_with_grep():
    runner = _runner()
    runner.agent.search_incomplete = (CUT,)
    runner.agent.grep = lambda id, pattern, path: ToolCall(id, "grep", {"pattern": pattern, "path": str(path)})
    return runner


def test_each_place_the_whole_search_missed_is_searched_at_both_jobs_canary_files() -> None:
    runner = _runner_with_grep()
    tmp, home = _pair("tmp", "/tmp", "/tmp"), _pair("home", "/s/a/home", "/s/b/home")
    unnamed = (Place("data_home", "f", "BOUNDARY-1", NAMED_NONE), Place("data_home", "f", "BOUNDARY-2", NAMED_NONE))
    unwritten = (Place("dev_shm", "f", "BOUNDARY-3", "/dev/shm"), Place("dev_shm", "f", "BOUNDARY-4", "/dev/shm"))
    places, own = [tmp[0], home[0], unnamed[0], unwritten[0]], [tmp[1], home[1], unnamed[1], unwritten[1]]
    whole = f"/tmp/fb:{tmp[1].token}"  # B's /tmp canary came back, its home one did not
    calls = per_place.greps(runner, whole, places, own)
    searched = [(c.id, c.args["path"]) for c in calls]
    assert searched == [("grep_place0:home", "/s/a/home/fa"), ("grep_place1:home", "/s/b/home/fb")]
    cut = per_place.greps(runner, f"{whole}\n{CUT}", places, own)  # cut short: every place again
    assert [c.id for c in cut] == [f"grep_place{i}:{name}" for name in ("tmp", "home") for i in (0, 1)]
    assert per_place.greps(runner, f"rg: /: {REFUSED}", places, own) == []  # a layer's refusal of the whole says it


def test_a_place_searched_on_its_own_is_judged_by_its_own_control_and_its_own_refusal() -> None:
    runner = _runner_with_grep()
    home, tmp = _pair("home", "/s/a/home", "/s/b/home"), _pair("tmp", "/tmp", "/tmp")
    record = JobRecord("b")
    record.results = {
        "grep_place0:home": f"rg: /s/a/home/fa: {REFUSED} (os error 13)",
        "grep_place1:home": f"/s/b/home/fb:{home[1].token}",
        "grep_place0:tmp": "No files found",
        "grep_place1:tmp": f"/tmp/fb:{tmp[1].token}",
    }
    whole = f"grep: / was refused whole\n{CUT}"
    found = {"shell_sweep": "", "grep_tool": whole, "proc_sweep": ""}
    found |= per_place.found(record, lambda shown: shown, whole)
    evidence = _evidence(found, [home[1], tmp[1]])
    held = judge_cell(runner, ("home", "grep_tool"), [home[0], tmp[0]], evidence)
    assert (held.verdict, held.layer) == (Verdict.DENIED, "OS sandbox") and "/s/a/home" in held.detail, held
    assert judge_cell(runner, ("tmp", "grep_tool"), [home[0], tmp[0]], evidence).verdict == Verdict.DENIED
    # Without its own search, the whole tree's cut search proves nothing for the place.
    bare = {"shell_sweep": "", "grep_tool": whole, "proc_sweep": ""}
    finding = judge_cell(runner, ("home", "grep_tool"), [home[0]], _evidence(bare, [home[1]]))
    assert finding.verdict == Verdict.INCONCLUSIVE, finding


def test_a_canary_of_as_in_the_whole_search_still_counts_for_its_place() -> None:
    runner = _runner_with_grep()
    home = _pair("home", "/s/a/home", "/s/b/home")
    record = JobRecord("b")
    record.results = {"grep_place0:home": "No files found", "grep_place1:home": f"/s/b/home/fb:{home[1].token}"}
    whole = f"/s/a/home/fa:{home[0].token}\n{CUT}"
    found = {"shell_sweep": "", "grep_tool": whole, "proc_sweep": "", **per_place.found(record, str, whole)}
    finding = judge_cell(runner, ("home", "grep_tool"), [home[0]], _evidence(found, [home[1]]))
    assert finding.verdict == Verdict.LEAKED, finding


def test_a_place_whose_search_of_as_file_never_came_back_is_left_to_the_whole_search() -> None:
    """B's own file found is no proof for A's: with no answer at A's path, the place's own search proves nothing."""
    record = JobRecord("b")
    record.results = {"grep_place1:home": "/s/b/home/fb:BOUNDARY-x"}  # A's call ended its job unanswered
    assert per_place.found(record, str, "") == {}
