"""What several scenarios share: the repository, job A and its targets, and the two-job shape around job B.

Job A runs a real shell command whose output the agent saves; the harness plants more targets in A's data
directory, checkout and the account database, each with its own canary. Scenarios then attack those
targets from job B, created beside A (`after_job_a`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from boundary import canary
from boundary.jobs.session import Session
from boundary.model import Script
from boundary.probes import Target
from boundary.results import ProbeResult
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import JOB_A, JOB_B

REPOSITORY_FILES = {"README.md": "A repository for boundary's probe jobs.\n", "src/app.py": "print('hello')\n"}
ACCOUNT = "account_db"  # the cell's name, whether the account keeps its data in a database or a directory
NO_ACCOUNT = "the runner keeps no account data: its setup answered neither account_db nor account_dir"


def after_job_a(
    runner: Runner, session: Session, attack: Callable[[Job, Job, list[Target]], list[ProbeResult]]
) -> list[ProbeResult]:
    """The two-job shape: the repository set up, job A run (its targets planted), then job B created while A
    still exists, and `attack(job_a, job_b, targets)` run."""
    session.set_up(runner, REPOSITORY_FILES)
    with session.job(runner, JOB_A) as job_a:
        targets = run_job_a(runner, session, job_a)
        with session.job(runner, JOB_B) as job_b:
            return attack(job_a, job_b, targets)


def run_job_a(runner: Runner, session: Session, job: Job) -> list[Target]:
    """Job A's run: the output its agent saved first, then the targets planted beside it."""
    agent = runner.agent
    token = canary.new_canary()
    # No shell variables: Claude Code refuses a command it cannot check before it runs.
    call = agent.shell("a-save", f"seq {agent.saved_lines} | sed 's/^/{token} line /'")
    script = Script()
    script.add_step(call)
    _, record = session.run(job, script)
    saved = agent.saved_output(job.env, record.results.get(call.id, ""))
    missing = job.data_dir / "saved-output-missing"  # judged INCONCLUSIVE: not there
    targets = [Target("saved_output", saved or missing, token, saved.name if saved else canary.new_canary())]
    account = plant_account(runner)
    if account is None:
        session.not_planted[ACCOUNT] = NO_ACCOUNT
    return targets + _plant(runner, job) + ([account] if account else [])


def _plant(runner: Runner, job: Job) -> list[Target]:
    """A file where the agent keeps each kind of thing it saves, and one in A's checkout, each with canaries."""
    planted = []
    for kind in runner.agent.storage_targets:
        name = canary.new_canary()
        path = runner.agent.storage_path(kind, job.env, job.checkout, name)
        planted.append(Target(kind, path, canary.new_canary(), name))
    name = canary.new_canary()
    planted.append(Target("checkout_file", job.checkout / f"notes-{name}.txt", canary.new_canary(), name))
    for target in planted:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        target.path.write_text(f"{target.content}\n")
    return planted


def plant_account(runner: Runner) -> Target | None:
    """The account's shared data: a row in its database, else a text file in its directory, else none (a
    target the runner never made would be a false alarm, or a refusal no layer explains)."""
    db, directory = runner.account_db(), runner.account_dir()
    if db is not None:
        return _plant_in_database(db)
    if directory is None:
        return None
    name = canary.new_canary()
    target = Target(ACCOUNT, directory / f"account-{name}.txt", canary.new_canary(), name)
    directory.mkdir(parents=True, exist_ok=True)
    target.path.write_text(f"{target.content}\n")
    return target


def _plant_in_database(db: Path) -> Target:
    token = canary.new_canary()
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("CREATE TABLE IF NOT EXISTS boundary_canary (token TEXT)")
        connection.execute("INSERT INTO boundary_canary VALUES (?)", (token,))
    with closing(sqlite3.connect(db)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # into the file itself, where a reader looks
    return Target(ACCOUNT, db, token)
