"""A file jobs A and B share by inode that is also linked outside the run (a template, a tool's install) is attacked
like any other shared file, and what a write that got through left in it is put back in place at once."""

from __future__ import annotations

import os
from pathlib import Path

from boundary.model.script import Script
from boundary.scenarios.cross_job_writes import CrossJobWrites
from boundary.verdict import Verdict
from boundary.writes.attack import CHANNELS, WriteAttack
from boundary.writes.shared import put_back
from boundary.writes.state import state
from boundary.writes.target import WriteTarget
from tests.writes.test_writes_fail_closed import RUNNER, FakeSession, fake_job, fake_runner

TOOL = b"#!/bin/sh\necho the machine's tool\n"


def _machine_tool(tmp_path: Path) -> Path:
    """A read-only file outside the run, as a tool's install keeps it."""
    machine = tmp_path / "machine" / "tool"
    machine.parent.mkdir()
    machine.write_bytes(TOOL)
    machine.chmod(0o555)
    return machine


def test_a_file_both_jobs_link_from_outside_the_run_is_attacked_and_put_back(tmp_path: Path) -> None:
    """Both checkouts hard-link one tool from outside the run and B rewrites its copy in place: the shared_file
    cell is WRITTEN, not "no shared file found to attack", and the outside copy holds its bytes and mode again."""
    job_a, job_b = fake_job(tmp_path, "job-a"), fake_job(tmp_path, "job-b")
    saved = tmp_path / "job-a.data" / "tool_1"
    saved.parent.mkdir()
    saved.write_text("A's output\n")
    machine = _machine_tool(tmp_path)
    os.link(machine, job_a.checkout / "tool")
    os.link(machine, job_b.checkout / "tool")

    def in_place(job: object, resumed: bool) -> None:
        own = job_b.checkout / "tool"
        own.chmod(0o755)
        own.write_bytes(b"B's tool\n")

    results = CrossJobWrites()._attack(fake_runner(), FakeSession(tmp_path, in_place), job_a, job_b, saved)  # type: ignore[arg-type]
    for channel in CHANNELS:
        found = next(r for r in results if (r.target, r.channel) == ("shared_file", channel))
        assert found.verdict == "WRITTEN" and "also linked outside the run" in found.detail, found
    assert machine.read_bytes() == TOOL and machine.stat().st_mode & 0o777 == 0o555
    assert os.stat(machine).st_ino == os.stat(job_b.checkout / "tool").st_ino  # the same inode, put back in place


def test_a_write_that_got_through_is_put_back_before_the_next_channel(tmp_path: Path) -> None:
    """The write step rewrites the shared inode: WRITTEN for that channel, and the next channel meets the file as it
    was, so the outside copy never keeps what the job wrote."""
    machine = _machine_tool(tmp_path)
    own = tmp_path / "b" / "tool"
    own.parent.mkdir()
    os.link(machine, own)
    attack = WriteAttack([WriteTarget("shared_file", own, "shared", seen_at=machine)], Verdict.WRITTEN)
    script = Script()
    attack.add_to(script, RUNNER)
    for index in sorted(script.checkpoints):
        if script.steps[index][0].id.startswith("wr-write-"):
            own.chmod(0o755)
            own.write_text(attack.targets[0].content("write"))
        script.checkpoints[index]()
    attack.collect({})
    assert attack.judge(0, "write", {}, [], ()).verdict is Verdict.WRITTEN
    assert set(attack.targets[0].effects) == {"write"}
    assert machine.read_bytes() == TOOL and machine.stat().st_mode & 0o777 == 0o555


def test_put_back_never_writes_through_what_the_job_put_in_the_files_place(tmp_path: Path) -> None:
    """A shared path the job replaced, by a link to another file or by a file of its own, is not the inode
    snapshotted: nothing is written there."""
    machine = _machine_tool(tmp_path)
    own = tmp_path / "own"
    os.link(machine, own)  # the snapshotted inode lives on here: no new file can take its number
    target = WriteTarget("shared_file", own, "shared", seen_at=machine)
    target.snapshot()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("not the harness's to write\n")
    machine.unlink()
    machine.symlink_to(elsewhere)
    assert put_back(target, state(machine))[1] is None
    assert elsewhere.read_text() == "not the harness's to write\n"
    machine.unlink()
    machine.write_bytes(b"changed\n")
    assert put_back(target, state(machine))[1] is None and machine.read_bytes() == b"changed\n"
    assert own.read_bytes() == TOOL
