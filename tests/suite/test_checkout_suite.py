"""In a checkout, `pytest scenarios/` is the live suite that `boundary run` runs (the root conftest.py forwards it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from paths import ROOT


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_pytest_scenarios_collects_the_live_suite_with_its_options(tmp_path: Path) -> None:
    """The suite's options parse, and what is collected is the live suite's tests for the scenario asked for."""
    run = _pytest(str(ROOT / "scenarios"), "--co", "-q", "--agent", "codex", "--scenario", "cross_job", cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    ids = [line for line in run.stdout.splitlines() if "::test_" in line]  # the suite's module, as `boundary run`
    assert ids and all("cross_job-codex-" in line for line in ids), run.stdout[-2000:]
    assert any("test_probe[" in line for line in ids) and any("test_host_healthy[" in line for line in ids)


def test_the_harness_tests_do_not_load_the_suite() -> None:
    """A run that does not name scenarios/ goes on as it came: the suite's plugin is not among its plugins."""
    run = _pytest("tests/test_layers.py", "-q", "--trace-config", cwd=ROOT)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "boundary.suite.plugin" not in run.stdout and "boundary/suite/pytest.ini" not in run.stdout
