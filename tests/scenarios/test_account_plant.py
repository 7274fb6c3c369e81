"""Where boundary plants the account's shared data for job B to reach for: in the runner's database, else in its
account directory, else nowhere (and the report says so), never in a file the runner never made."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boundary.report.record import ScenarioRecord
from boundary.scenarios.common import ACCOUNT, NO_ACCOUNT, plant_account
from boundary.suite.runs import _not_planted


def runner(db: Path | None = None, directory: Path | None = None) -> Any:
    return SimpleNamespace(account_db=lambda: db, account_dir=lambda: directory)


def test_a_database_gets_a_row(tmp_path: Path) -> None:
    db = tmp_path / "account.db"
    target = plant_account(runner(db, tmp_path / "ignored"))
    assert target is not None and target.path == db and target.presence() is None
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT token FROM boundary_canary").fetchall() == [(target.content,)]
    assert not (tmp_path / "ignored").exists()


def test_a_directory_gets_a_text_file_every_agent_reads(tmp_path: Path) -> None:
    target = plant_account(runner(directory=tmp_path / "account"))
    assert target is not None and target.name == ACCOUNT and target.path.parent == tmp_path / "account"
    assert target.path.read_text() == f"{target.content}\n" and target.name_token in target.path.name


def test_neither_plants_nothing(tmp_path: Path) -> None:
    assert plant_account(runner()) is None
    assert list(tmp_path.iterdir()) == []


def test_an_unplanted_target_leaves_the_plan_and_is_said_only_where_it_was_planned() -> None:
    planned = [("saved_output", "read"), (ACCOUNT, "read"), (ACCOUNT, "grep")]
    record = ScenarioRecord("cross_job", "reads", list(planned))
    _not_planted(record, {ACCOUNT: NO_ACCOUNT})
    assert record.planned == [("saved_output", "read")] and record.not_planted == {ACCOUNT: NO_ACCOUNT}
    other = ScenarioRecord("tamper", "writes", [("runner_files", "write")])
    _not_planted(other, {ACCOUNT: NO_ACCOUNT})  # tamper plants job A's targets too, but has no account cell
    assert other.planned == [("runner_files", "write")] and other.not_planted == {}
