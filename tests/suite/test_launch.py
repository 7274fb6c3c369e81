"""`boundary run` (boundary/suite/launch.py): which shard of a CI matrix the run is goes into its report, and its
exit status is the run's, even when what it prints has no reader any more."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from boundary.report.record import SHARD_ENV
from boundary.suite import launch
from tests.report.test_cli_reports import to_a_reader_gone


def test_the_shard_option_becomes_the_suites_place_and_a_malformed_one_runs_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--shard 2/4` is no pytest option: the suite gets it as its environment, which its report records."""
    ran: list[tuple[list[str], dict[str, str] | None]] = []

    def record(command: list[str], env: dict[str, str] | None = None, **_: Any) -> subprocess.CompletedProcess[str]:
        ran.append((command, env))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(launch.subprocess, "run", record)
    assert launch.run_suite(["--agent", "opencode", "--shard", "2/4"]) == 0
    command, env = ran[0]
    assert "--shard" not in command and "2/4" not in command and "opencode" in command
    assert env is not None and env[SHARD_ENV] == "2/4"
    assert launch.run_suite(["--shard=5/4"]) == 2 and len(ran) == 1
    assert "boundary: --shard: expected I/N" in capsys.readouterr().err


RUN_EACH_LAYER = """
import subprocess, sys
from boundary import cli
from boundary.suite import launch
launch.subprocess.run = lambda command, **_: subprocess.CompletedProcess(command, int(sys.argv[2]))  # each run's
sys.exit(cli.main(["run", "--layers", "each", "--boundary-report=" + sys.argv[1]]))
"""


@pytest.mark.parametrize("status", [1, 0], ids=["failed run", "passed run"])
def test_layers_each_exits_with_the_full_runs_status_when_its_reader_has_gone(status: int, tmp_path: Path) -> None:
    """`boundary run --layers each | head`: what it prints between and after the runs meets a closed pipe; the
    status is still the full run's (a failed run's 1 never becomes 0), and every layer's run still happens."""
    full = tmp_path / "run.json"
    full.write_text(json.dumps({"run": {"denials": {"opencode": {"OS sandbox": ["EPERM"], "runner plugin": ["g"]}}}}))
    assert to_a_reader_gone([sys.executable, "-c", RUN_EACH_LAYER, str(full), str(status)]) == status
    assert "runner plugin" in json.loads(full.read_text())["depth"]["layers"], "a layer's run was cut off"


def test_run_help_leads_with_boundarys_own_options_then_pytests() -> None:
    """`boundary run --help` shows the suite's options first: in pytest's own help they come ~180 lines down."""
    done = subprocess.run([sys.executable, "-m", "boundary.cli", "run", "--help"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("usage: boundary run")
    assert "--runner-cmd=COMMAND" in "\n".join(lines[:15])
    own, pytests = lines.index("boundary run's own:"), lines.index("pytest's options:")
    assert own < pytests and any("-k EXPRESSION" in line for line in lines[pytests:])
    assert sum(line.strip() == "live sandbox boundary tests:" for line in lines) == 1  # moved, not repeated
