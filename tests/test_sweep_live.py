"""Live control for the sweep's discovery (issue 16, item 13): a runner that shares one writable place between its
jobs that no fixed place names — one npm cache for the account — fails, the place named."""

from __future__ import annotations

import pytest
from live import run_suite
from test_controls import scenario

pytestmark = pytest.mark.live


def test_a_cache_every_job_shares_is_found_where_the_environment_names_it(pytester: pytest.Pytester) -> None:
    """Job A finds the cache its `npm_config_cache` names and plants there; job B's sweep finds A's canary in it.
    Every fixed place holds as the reference runner's do: only the discovered place leaks."""
    runner = "boundary.sabotage.sweep:SharesNpmCache"
    result, report = run_suite(pytester, "--agent", "opencode", "--scenario", "sweep", "--runner", runner)
    assert result.ret == 1
    cells = {(r["target"], r["channel"]): r for r in scenario(report, "sweep")["results"]}
    leaked = cells.pop(("discovered_places", "shell_sweep"))
    assert leaked["verdict"] == "LEAKED", leaked
    assert "npm-cache (found by env-npm_config_cache)" in leaked["detail"], leaked["detail"]
    assert {cell: r["verdict"] for cell, r in cells.items() if r["verdict"] != "DENIED"} == {}
    result.stdout.fnmatch_lines(["*LEAKED: discovered_places via shell_sweep: *npm-cache*"])
