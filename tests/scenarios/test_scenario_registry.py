"""The scenario registry: built-in and installed scenarios by name, outside ones by module:Class."""

from __future__ import annotations

import json
import os
from importlib.metadata import EntryPoint

import pytest
from paths import ROOT

from boundary import scenarios
from boundary.scenarios import BUILT_IN, Scenario, get_scenario, registry
from boundary.suite import pytest_args

EXAMPLES = ROOT / "examples" / "scenarios"


def test_every_entry_imports_and_is_named_as_registered():
    for name, kind in registry().items():
        assert issubclass(kind, Scenario) and kind.name == name and kind().title


def test_a_scenario_outside_boundary_loads_as_module_and_class(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    scenario = get_scenario("boundary_git_history:GitHistory")
    assert scenario.name == "git_history" and scenario.name not in BUILT_IN


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("no_such_module:Scenario", "cannot load 'no_such_module:Scenario'"),
        ("boundary.scenarios:Nope", "cannot load"),
        ("boundary.layout:JobPaths", "is not a boundary.scenarios.Scenario subclass"),
        ("nothing_like_it", "unknown scenario 'nothing_like_it'; expected one of: cross_job"),
    ],
)
def test_a_scenario_that_cannot_load_says_why(spec, says):
    with pytest.raises(ValueError, match=says):
        get_scenario(spec)


def _entry_points(*entries: EntryPoint):
    return lambda group: [e for e in entries if e.group == group]


def test_an_installed_packages_entry_point_registers_its_scenario(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    entry = EntryPoint("git_history", "boundary_git_history:GitHistory", scenarios.ENTRY_POINTS)
    monkeypatch.setattr(scenarios, "entry_points", lambda group: [entry] if group == entry.group else [])
    registry.cache_clear()
    try:
        assert registry()["git_history"].__name__ == "GitHistory"
    finally:
        registry.cache_clear()


def test_an_entry_point_named_otherwise_than_its_scenario_is_refused(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    entry = EntryPoint("history", "boundary_git_history:GitHistory", scenarios.ENTRY_POINTS)
    monkeypatch.setattr(scenarios, "entry_points", lambda group: [entry])
    registry.cache_clear()
    try:
        with pytest.raises(ValueError, match="loads scenario 'git_history': the names must agree"):
            registry()
    finally:
        registry.cache_clear()


@pytest.mark.live
def test_the_example_outside_scenario_runs_with_the_same_rules_and_report_keys(pytester, monkeypatch):
    """Held by the reference runner; with the OS sandbox off, the computed path reaches job A's history."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(EXAMPLES), os.environ.get("PYTHONPATH", "")]))
    spec = "boundary_git_history:GitHistory"
    report = pytester.path / "report.json"
    common = (*pytest_args(), "--boundary-report", str(report), "--scenario", spec, "--agent", "opencode")
    held = pytester.runpytest_subprocess(*common, timeout=600)
    data = json.loads(report.read_text())
    assert held.ret == 0, held.stdout.str()[-3000:]
    results = {(r["target"], r["channel"]): r for r in data["scenarios"]["opencode/git_history"]["results"]}
    assert results["job_a_commit", "git_log_computed"]["verdict"] == "DENIED"
    leaked = pytester.runpytest_subprocess(*common, "--sandbox", "passthrough", timeout=600)
    results = {
        (r["target"], r["channel"]): r
        for r in json.loads(report.read_text())["scenarios"]["opencode/git_history"]["results"]
    }
    assert leaked.ret != 0 and results["job_a_commit", "git_log_computed"]["verdict"] == "LEAKED"
