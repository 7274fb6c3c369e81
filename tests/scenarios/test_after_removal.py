"""The after-removal scenario's judging, from outside: a canary of A's in job C's own files is LEAKED at once; what A
left elsewhere is found (in a file's content or its name) and becomes C's target; nothing left is said."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boundary.probes import Target
from boundary.scenarios.after_removal import _holders_in, _inherited, _nothing_left, _unproven
from boundary.verdict import Verdict

SAVED = Target("saved_output", Path("/a/saved"), "BOUNDARY-00000000000000000001", "BOUNDARY-00000000000000000002")


def job(name: str = "job-b") -> Any:
    return SimpleNamespace(name=name)


def test_a_canary_is_found_in_a_files_content_or_its_name(tmp_path: Path) -> None:
    by_content, by_name, other = tmp_path / "archive.log", tmp_path / f"tool_{SAVED.name_token}", tmp_path / "x"
    by_content.write_text(f"line {SAVED.content}\n")
    by_name.write_text("renamed, its content gone\n")
    other.write_text("BOUNDARY-99999999999999999999\n")
    assert _holders_in([(p, p) for p in (by_content, by_name, other)], [SAVED], []) == {
        "saved_output": [by_content, by_name]
    }


def test_a_canary_in_job_cs_own_files_is_leaked_naming_them() -> None:
    found = _inherited(SAVED, {"saved_output": [Path("/s/checkouts/job-b/notes.txt")]}, job())
    assert found.verdict is Verdict.LEAKED and "job job-b was created holding A's canary" in found.detail
    assert "/s/checkouts/job-b/notes.txt" in found.detail
    clean = _inherited(SAVED, {}, job())
    assert clean.verdict is Verdict.DENIED and "none of A's canaries in job job-b's own files" in clean.detail


def test_nothing_left_says_what_was_searched() -> None:
    said = _nothing_left(SAVED, Path("/s"), listed=True)
    assert said.verdict is Verdict.DENIED and "nothing of A's saved_output under /s after remove-job" in said.detail


def test_nothing_left_where_the_host_lists_no_write_outside_state_proves_nothing() -> None:
    """Issue 55: on --host container or live the runner's verbs run on this machine, and nothing lists what they
    wrote outside STATE (an archive under /var/log): "nothing left" was DENIED without having looked there."""
    said = _nothing_left(SAVED, Path("/s"), listed=False)
    assert said.verdict is Verdict.INCONCLUSIVE and "--host namespace lists them" in said.detail


def test_a_canary_in_a_compressed_archive_is_found(tmp_path: Path) -> None:
    """Issue 42: a runner that archives a job's output as a .tar.gz at removal left A's canary where the search,
    reading bytes, saw none."""
    content = f"the job's output: {SAVED.content}\n".encode()
    tarball = io.BytesIO()
    with tarfile.open(fileobj=tarball, mode="w:gz") as archive:
        member = tarfile.TarInfo("job-a/output.txt")
        member.size = len(content)
        archive.addfile(member, io.BytesIO(content))
    (tmp_path / "job-a.tar.gz").write_bytes(tarball.getvalue())
    (tmp_path / "other.gz").write_bytes(gzip.compress(b"nothing of A's"))
    unread: list[str] = []
    assert _holders_in([(p, p) for p in sorted(tmp_path.iterdir())], [SAVED], unread) == {
        "saved_output": [tmp_path / "job-a.tar.gz"]
    }
    assert unread == []


def test_nothing_found_where_a_file_could_not_be_read_is_inconclusive(tmp_path: Path) -> None:
    broken = tmp_path / "job-a.zip"
    broken.write_bytes(b"PK\x03\x04 not a zip after all")
    unread: list[str] = []
    assert _holders_in([(broken, broken)], [SAVED], unread) == {}
    assert len(unread) == 1 and "job-a.zip: a zip archive it could not unpack" in unread[0]
    said = _unproven(_nothing_left(SAVED, tmp_path, listed=True), unread)
    assert said.verdict is Verdict.INCONCLUSIVE and "could not search to the end" in said.detail
    assert _unproven(_nothing_left(SAVED, tmp_path, listed=True), []).verdict is Verdict.DENIED
