"""The tamper scenario's groups, judged without an agent: every configuring file found is attacked or listed.

A stand-in session plays a job with no layer at all: its write tool writes wherever it is told, and the
checkpoints run after each step as the model server runs them. What the scenario attacks is then what
changed on disk.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from boundary import canary
from boundary.agents.opencode import OpenCode
from boundary.layout import JobPaths
from boundary.model import Script
from boundary.model.record import JobRecord
from boundary.probes import Target
from boundary.results import ProbeResult
from boundary.runners.contract import Job
from boundary.scenarios.tamper.configuring import KINDS, discover, snapshot
from boundary.scenarios.tamper.scenario import Tamper
from boundary.writes.attack import CHANNELS, WriteAttack
from boundary.writes.target import CONTROL, WriteTarget


def fake_runner() -> SimpleNamespace:
    agent = OpenCode()
    sandbox = SimpleNamespace(name="srt", startup_failures=())
    return SimpleNamespace(name="fake", agent=agent, sandbox=sandbox, denials=dict(agent.denials))


class Unconfined:
    """A job whose file tools reach every path it is let reach (`allowed`; by default all): each `write` and
    `edit` call is carried out, others are refused with the agent's own text; every other call answers ok.
    `meanwhile` runs after each call, as the agent's own work would (SQLite making its write-ahead log)."""

    def __init__(self, workdir: Path, allowed: Any = None, meanwhile: Any = None, at_exit: Any = None) -> None:
        self.workdir, self.allowed, self.meanwhile = workdir, allowed or (lambda path: True), meanwhile
        self.at_exit = at_exit
        self.scenario, self.jobs = "tamper", []  # type: ignore[var-annotated]
        (workdir / "transcript").write_text("")

    def run(self, job: Job, script: Script, resumed: bool = False, label: str = "") -> tuple[Any, JobRecord]:
        self.jobs.append(
            SimpleNamespace(name=f"tamper.{job.name}{label or ('.resumed' if resumed else '')}", problems=[])
        )
        record = JobRecord(job.name)
        refusal = OpenCode.denials["agent permission"][0]
        for index, step in enumerate(script.steps):
            for call in step:
                record.results[call.id] = "ok"
                if call.tool in ("write", "edit"):
                    path = Path(call.args["filePath"])
                    if not self.allowed(path):
                        record.results[call.id] = f"Error: {refusal}"
                        continue
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(call.args.get("content", call.args.get("newString", "")))
                    record.results[call.id] = "Wrote file successfully."
                if self.meanwhile:
                    self.meanwhile()
            if index in script.checkpoints:
                script.checkpoints[index]()
        if self.at_exit:
            self.at_exit(label)
        return SimpleNamespace(transcript=self.workdir / "transcript"), record

    def run_to_the_end(
        self, job: Job, script: Script, resumed: bool = False, label: str = "", halt: Any = None
    ) -> tuple[Any, JobRecord, str]:
        """Every call is answered: nothing is left to run again."""
        return (*self.run(job, script, resumed, label), "")

    def problems_of(self, name: str, resumed: bool = False) -> list[str]:
        return []


@pytest.fixture
def state(tmp_path: Path) -> Path:
    (tmp_path / "state").mkdir()
    return tmp_path / "state"


def make_job(state: Path, env: dict[str, str], argv: list[str]) -> Job:
    checkout = state / "checkouts" / "job-b"
    checkout.mkdir(parents=True)
    return Job("job-b", JobPaths("job-b", checkout, state / "checkouts" / "job-b.data"), argv, env)


def account_db(state: Path) -> Path:
    db = state / "accounts" / "account" / "opencode.db"
    db.parent.mkdir(parents=True)
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE session (id TEXT)")
    return db


def by_cell(results: list[ProbeResult]) -> dict[tuple[str, str], ProbeResult]:
    return {(r.target, r.channel): r for r in results}


def test_an_empty_group_is_inconclusive_not_denied() -> None:
    """Nothing found to attack proves nothing: the cell says INCONCLUSIVE, and why."""
    scratch = WriteTarget(CONTROL, Path("/nonexistent/scratch"), "the control")
    scratch.effects = {channel: "changed" for channel in CHANNELS}
    attack = WriteAttack([scratch], changed_verdict=None)  # type: ignore[arg-type]
    results = Tamper()._write_results(fake_runner(), attack, [])  # type: ignore[arg-type]
    assert {(r.target, r.verdict) for r in results} == {(kind, "INCONCLUSIVE") for kind in KINDS}
    assert all("no " in r.detail and "found" in r.detail for r in results)


def test_the_account_database_its_log_and_the_agents_own_files_are_attacked_and_every_file_is_listed(
    state: Path, tmp_path: Path
) -> None:
    """The shared account database (and its -wal/-shm), a binary file and a file the agent rewrites are attacked
    (judged by marker); a file outside the run's directory is listed with what was done with it."""
    db = account_db(state)
    outside = tmp_path / "tools" / "opencode"
    outside.parent.mkdir()
    outside.write_text("#!/bin/sh\n")
    binary = state / "runner" / "job-b" / "wrapper"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"\x7fELF\0\0\0" + b"\0" * 64)
    rewritten = state / "runner" / "job-b" / "config" / "opencode" / "package.json"
    rewritten.parent.mkdir(parents=True)
    rewritten.write_text('{"dependencies": {}}\n')
    before = snapshot(state)
    job = make_job(state, {"OPENCODE_DB": str(db), "WRAPPER": str(binary)}, [str(outside), "run"])
    runner = fake_runner()
    runner.agent.config_dirs = lambda env: [rewritten.parent]  # type: ignore[method-assign]
    runner.agent.project_config_paths = lambda: ()  # type: ignore[method-assign]
    found = discover(runner, job, snapshot(state) - before, state)  # type: ignore[arg-type]
    saved_path = state / "checkouts" / "job-a.data" / "saved"
    saved_path.parent.mkdir(parents=True)
    saved = Target("saved_output", saved_path, canary.new_canary(), "saved")
    saved_path.write_text(saved.content)
    original = db.read_bytes()

    session = Unconfined(tmp_path)
    results = Tamper()._attack(runner, session, job, found, {rewritten}, saved)  # type: ignore[arg-type]

    assert db.read_bytes() != original, "the account database was not attacked"
    for sibling in ("-wal", "-shm"):
        assert Path(f"{db}{sibling}").exists(), f"the database's {sibling} was not attacked"
    assert binary.read_bytes() != b"\x7fELF\0\0\0" + b"\0" * 64, "a binary file was not attacked"
    assert rewritten.read_text() != '{"dependencies": {}}\n', "a file the agent rewrites was not attacked"
    cells = by_cell(results)
    write = cells[("launch_files", "write")]
    assert write.verdict == "TAMPERED", write.detail
    assert str(outside) in write.detail and "not attacked" in write.detail
    assert cells[("agent_config", "write")].verdict == "TAMPERED"


def test_sqlites_own_write_ahead_log_coming_and_going_is_no_tampering(state: Path, tmp_path: Path) -> None:
    """The agent's database makes its -wal and -shm while it runs, and may leave an empty -wal behind: only a
    channel's marker in one shows a write landed. Here every write is refused but the job's own scratch file's."""
    db = account_db(state)
    wal = Path(f"{db}-wal")
    job = make_job(state, {"OPENCODE_DB": str(db)}, ["/bin/true"])
    runner = fake_runner()
    runner.agent.config_dirs = lambda env: []  # type: ignore[method-assign]
    runner.agent.project_config_paths = lambda: ()  # type: ignore[method-assign]
    found = discover(runner, job, set(), state)  # type: ignore[arg-type]
    saved_path = state / "checkouts" / "job-a.data" / "saved"
    saved_path.parent.mkdir(parents=True)
    saved = Target("saved_output", saved_path, canary.new_canary(), "saved")
    saved_path.write_text(saved.content)

    def sqlite_at_work() -> None:  # an empty log while the agent runs (SQLite truncates it at a checkpoint)
        wal.write_bytes(b"")

    def closed(label: str) -> None:  # removed when the agent closes the database, but by the last run's agent
        if label != ".database":
            wal.unlink(missing_ok=True)

    session = Unconfined(
        tmp_path, allowed=lambda path: path.name.startswith("scratch-"), meanwhile=sqlite_at_work, at_exit=closed
    )
    results = by_cell(Tamper()._attack(runner, session, job, found, set(), saved))  # type: ignore[arg-type]
    for channel in ("edit", "write"):
        cell = results[("launch_files", channel)]
        assert (cell.verdict, cell.layer) == ("DENIED", "agent permission"), cell.detail
