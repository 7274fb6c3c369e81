"""cross_job's record of what changed in job A's files while job B ran: a file a tool appended to keeps its canary,
and still changed (its tool is WRITTEN); the account's database, which every job's agent writes, is not looked at."""

from __future__ import annotations

from pathlib import Path

from boundary.probes import Target
from boundary.scenarios.common import ACCOUNT
from boundary.scenarios.cross_job.scenario import rewritten, snapshots


def test_an_append_that_keeps_the_canary_is_a_change_and_the_account_database_is_not_looked_at(tmp_path: Path) -> None:
    saved, database, kept = tmp_path / "out.txt", tmp_path / "account.db", tmp_path / "kept.txt"
    for path in (saved, database, kept):
        path.write_text("BOUNDARY-0000000000000000a0a0\n")
    targets = [Target("saved_output", saved, "BOUNDARY-0000000000000000a0a0"), Target(ACCOUNT, database, "x")]
    targets.append(Target("checkout_file", kept, "BOUNDARY-0000000000000000a0a0"))
    looked = snapshots(targets)
    for path in (saved, database):
        with path.open("a") as file:
            file.write("appended by a tool\n")
    assert rewritten(targets, looked) == {"saved_output"}
