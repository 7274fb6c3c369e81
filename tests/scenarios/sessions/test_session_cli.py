"""The sessions scenario's CLI cell: job B's shell asks the agent's own CLI for job A's session."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from boundary.runners.opencode import OpencodeRunner
from boundary.sandboxes import OS_DENIALS
from boundary.scenarios.sessions.cli import CLI_CELL, cli_command, cli_executable, cli_finding, sections
from boundary.scenarios.sessions.scenario import CONTINUE_CELL, Sessions

THEIRS = "BOUNDARY-0000000000000000000a"
THEIRS_ID, OWN_ID = "ses_aaaa", "ses_bbbb"
DENIALS = {"OS sandbox": OS_DENIALS}

# A stand-in for the agent's CLI, run by the real command: it answers as opencode does when its database holds
# both jobs' sessions (`listing`, `exported`), or cannot open it.
FAKE_CLI = """#!/bin/sh
case "$1" in
  --version) echo 1.18.33 ;;
  session) printf '%s\\n' "$LISTING" ;;
  export) printf '%s\\n' "$EXPORTED" ;;
esac
"""


def shell_result(tmp_path: Path, listing: str, exported: str, database: Path) -> str:
    """What job B's shell prints for the cell's command, with the fake CLI."""
    cli = tmp_path / "opencode"
    cli.write_text(FAKE_CLI)
    cli.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "LISTING": listing, "EXPORTED": exported, "OPENCODE_DB": str(database)}
    command = cli_command(str(cli), [THEIRS_ID])
    return subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True, check=True).stdout


def found(result: str | None, exists: bool = True, ids: list[str] | None = None, problems: list[str] | None = None):
    theirs_ids = [THEIRS_ID] if ids is None else ids
    return cli_finding(result, lambda _: exists, THEIRS, theirs_ids, [OWN_ID], DENIALS, problems or [])


def test_planned_for_opencode_only():
    assert Sessions().plan(OpencodeRunner()) == [CONTINUE_CELL, CLI_CELL]


def test_the_cli_is_the_one_the_job_runs_else_the_pinned_one():
    assert cli_executable("opencode", ["srt", "--settings", "s.json", "/opt/x/opencode", "run", "go"]) == (
        "/opt/x/opencode"
    )
    assert Path(cli_executable("opencode", ["node", "runner.mjs"])).name == "opencode"


def test_each_section_read_apart(tmp_path: Path):
    database = tmp_path / "opencode.db"
    database.write_bytes(b"x" * 7)
    result = shell_result(tmp_path, f'[{{"id": "{OWN_ID}"}}]', "Session not found", database)
    said = sections(result)
    assert said["version"] == "1.18.33"
    assert OWN_ID in said["list"] and "not found" not in said["list"]
    assert said["database"].splitlines() == [str(database), f"7 {database}"]
    assert "Session not found" in said["export"]


def test_an_export_that_gives_a_canary_is_leaked(tmp_path: Path):
    result = shell_result(tmp_path, "[]", f'{{"parts": [{{"text": "noted {THEIRS}"}}]}}', tmp_path / "db")
    finding = found(result)
    assert finding.verdict == "LEAKED" and THEIRS in finding.detail


def test_a_list_that_names_a_session_of_a_is_leaked(tmp_path: Path):
    result = shell_result(tmp_path, f'[{{"id": "{THEIRS_ID}"}}, {{"id": "{OWN_ID}"}}]', "", tmp_path / "db")
    finding = found(result)
    assert finding.verdict == "LEAKED" and THEIRS_ID in finding.detail and "session list" in finding.detail


def test_only_its_own_sessions_listed_is_denied(tmp_path: Path):
    result = shell_result(tmp_path, f'[{{"id": "{OWN_ID}"}}]', f"Session not found: {THEIRS_ID}", tmp_path / "db")
    finding = found(result)
    assert (finding.verdict, finding.layer) == ("DENIED", "n/a")
    assert "Session not found" in finding.detail


def test_a_database_the_shell_cannot_read_is_credited_to_the_layer_that_said_so(tmp_path: Path):
    error = "Error: Unexpected error unable to open database file"
    result = shell_result(tmp_path, error, error, tmp_path / "hidden.db")  # the shell's read: No such file
    finding = found(result, exists=True)
    assert (finding.verdict, finding.layer) == ("DENIED", "OS sandbox")
    assert "unable to open database file" in finding.detail
    missing = found(result, exists=False)  # the harness does not see it there either: nothing was hidden
    assert missing.verdict == "INCONCLUSIVE" and "not there seen from outside" in missing.detail


def test_a_refusal_no_layer_explains_is_inconclusive(tmp_path: Path):
    database = tmp_path / "opencode.db"
    database.write_bytes(b"x")
    result = shell_result(tmp_path, "Error: database is locked", "", database)  # the file reads fine
    assert found(result).verdict == "INCONCLUSIVE"


@pytest.mark.parametrize(
    ("result", "ids", "problems", "why"),
    [
        (None, None, None, "never answered"),
        ("== version\nsh: opencode: not found\n== list\n[]", None, None, "did not run"),
        ("== version\n1.18.33\n== list\n[]", [], None, "no session id"),
        ("== version\n1.18.33\n== list\n[]", None, ["job A crashed"], "job A crashed"),
    ],
)
def test_what_proves_nothing_is_inconclusive(result: str | None, ids: list[str] | None, problems, why: str):
    finding = found(result, ids=ids, problems=problems)
    assert finding.verdict == "INCONCLUSIVE" and why in finding.detail
