"""Live control for the sweep's discovery (issue 16, item 13): a runner that shares one writable place between its
jobs that no fixed place names — one npm cache for the account — fails, the place named."""

from __future__ import annotations

import pytest
from live import run_suite

from tests.live_runs.test_controls import scenario

pytestmark = pytest.mark.live


def test_a_cache_every_job_shares_is_found_where_the_environment_names_it(pytester: pytest.Pytester) -> None:
    """Job A finds the cache its `npm_config_cache` names and plants there; job B's sweep finds A's canary in it.
    Every fixed place holds as the reference runner's do: only the discovered place leaks."""
    result = _only_the_discovered_place_leaks(pytester, "SharesNpmCache", "npm-cache (found by env-npm_config_cache)")
    result.stdout.fnmatch_lines(["*LEAKED: discovered_places via shell_sweep: *npm-cache*"])


def test_one_writable_file_every_job_shares_is_found_and_named(pytester: pytest.Pytester) -> None:
    """Issue 28, item 4: no directory is shared, only one file (the account's global git config, writable in every
    job): A appends a canary line to it, B's sweep reads it back, and the cell names the file (found by its bind,
    or by the variable that names it)."""
    _only_the_discovered_place_leaks(pytester, "SharesGitConfig", "/accounts/account/gitconfig (found by ")


def _only_the_discovered_place_leaks(pytester: pytest.Pytester, sabotage: str, named: str) -> pytest.RunResult:
    runner = f"boundary.sabotage.sweep:{sabotage}"
    result, report = run_suite(pytester, "--agent", "opencode", "--scenario", "sweep", "--runner", runner)
    assert result.ret == 1
    cells = {(r["target"], r["channel"]): r for r in scenario(report, "sweep")["results"]}
    leaked = cells.pop(("discovered_places", "shell_sweep"))
    assert leaked["verdict"] == "LEAKED", leaked
    assert named in leaked["detail"], leaked["detail"]
    assert {cell: r["verdict"] for cell, r in cells.items() if r["verdict"] != "DENIED"} == {}
    return result


def test_the_key_in_an_encoded_form_where_only_the_sweep_looks_is_found(pytester: pytest.Pytester) -> None:
    """The shared cache holds the runner secret as npm keeps a credential (base64 of `user:password`): the sweep's
    shell, which is never handed the key's forms, finds it with the forms every canary takes, and the runner_secret
    cell is LEAKED (it was DENIED while the sweep looked for the harness's own canaries' forms only)."""
    runner = "boundary.sabotage.sweep:NpmAuthInSharedCache"
    result, report = run_suite(pytester, "--agent", "opencode", "--scenario", "sweep", "--runner", runner)
    assert result.ret == 1
    (secret,) = [r for r in scenario(report, "sweep")["results"] if r["target"] == "runner_secret"]
    assert secret["verdict"] == "LEAKED", secret
    assert "shell sweep found" in secret["detail"] or "own files" in secret["detail"], secret["detail"]


def test_a_place_only_the_agents_write_tool_may_write_is_found(pytester: pytest.Pytester) -> None:
    """Issue 42, item 4: the agent's file tools may write the host's /tmp while the shell's sandbox keeps the shell
    out of it: A's shell is refused there (DENIED before), A's write tool plants, and B's shell finds it."""
    runner = "boundary.sabotage.sweep:ToolsWriteTmp"
    result, report = run_suite(pytester, "--agent", "opencode", "--scenario", "sweep", "--runner", runner)
    assert result.ret == 1
    (tmp,) = [r for r in scenario(report, "sweep")["results"] if (r["target"], r["channel"]) == ("tmp", "shell_sweep")]
    assert tmp["verdict"] == "LEAKED" and "written by A's write tool" in tmp["detail"], tmp
