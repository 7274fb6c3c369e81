"""Files job B shares by inode, found from outside: a local clone's objects, one file in both views; and a write
that replaced B's own copy is put back as a link, so the next channel meets the shared file again."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from boundary.layout import JobPaths
from boundary.runners.contract import Job
from boundary.writes.shared import shared_files
from boundary.writes.shell import write_line
from boundary.writes.state import state
from boundary.writes.target import WriteTarget, relinked


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args], cwd=cwd, check=True, capture_output=True
    )


def _repository(tmp_path: Path) -> Path:
    repository = tmp_path / "repos" / "project"
    repository.mkdir(parents=True)
    _git("init", "-q", cwd=repository)
    (repository / "README.md").write_text("hello\n")
    _git("add", ".", cwd=repository)
    _git("commit", "-q", "-m", "first", cwd=repository)
    return repository


def _job(tmp_path: Path, name: str, repository: Path, *clone: str, env: dict[str, str] | None = None) -> Job:
    base = tmp_path / "state" / "jobs" / name
    paths = JobPaths(name, base / "checkout", base / "data", base / "private", base / "tmp")
    _git("clone", "-q", *clone, str(repository), str(paths.checkout))
    paths.create_dirs()
    return Job(name, paths, ["true"], env or {})


def test_local_clones_share_their_objects_with_each_other_and_the_repository(tmp_path: Path) -> None:
    repository = _repository(tmp_path)
    job_a, job_b = _job(tmp_path, "a", repository), _job(tmp_path, "b", repository)
    shared = shared_files(job_b, job_a, tmp_path / "state", tmp_path / "repos")
    assert shared, "a local clone hard-links .git/objects"
    for found in shared:
        assert found.path.is_relative_to(job_b.checkout / ".git" / "objects")
        assert os.stat(found.path).st_ino == os.stat(found.twin).st_ino
        assert found.whose == "job A" and found.twin.is_relative_to(job_a.checkout)


def test_clones_without_hard_links_share_nothing(tmp_path: Path) -> None:
    repository = _repository(tmp_path)
    job_a, job_b = (_job(tmp_path, name, repository, "--no-hardlinks") for name in "ab")
    assert shared_files(job_b, job_a, tmp_path / "state", tmp_path / "repos") == []


def test_one_file_linked_into_both_jobs_and_one_path_both_environments_name(tmp_path: Path) -> None:
    repository = _repository(tmp_path)
    common = tmp_path / "state" / "cache" / "index.json"
    common.parent.mkdir(parents=True)
    common.write_text("{}\n")
    env = {"RUNNER_CACHE": str(common.parent)}
    job_a = _job(tmp_path, "a", repository, "--no-hardlinks", env=env)
    job_b = _job(tmp_path, "b", repository, "--no-hardlinks", env=env)
    os.link(common, job_b.data_dir / "linked.json")
    found = {(s.path, s.twin, s.whose) for s in shared_files(job_b, job_a, tmp_path / "state", tmp_path / "repos")}
    assert (common, common, "job A") in found  # the same path in both views
    assert any(path == job_b.data_dir / "linked.json" for path, _, _ in found)


def test_a_channel_that_replaced_its_own_copy_is_noted_and_the_link_put_back(tmp_path: Path) -> None:
    twin, own = tmp_path / "a-object", tmp_path / "b-object"
    twin.write_text("shared\n")
    os.link(twin, own)
    target = WriteTarget("shared_file", own, "shared", seen_at=twin)
    target.snapshot()
    marker = target.content("write").strip()
    own.unlink()
    own.write_text(f"{marker}\n")  # a new inode: what an atomic write leaves
    relinked(target, "write", state(twin))
    assert "replaced job B's own copy" in target.own_copy["write"]
    assert os.stat(own).st_ino == os.stat(twin).st_ino and own.read_text() == "shared\n"


def test_the_shell_makes_a_read_only_file_it_owns_writable_first(tmp_path: Path) -> None:
    path = tmp_path / "object"
    path.write_text("x")
    path.chmod(0o444)
    line = write_line(0, path, "marker\n", computed=False, owned=True)
    ran = subprocess.run(["bash", "-c", line], capture_output=True, text=True, check=True)
    assert "rc=0" in ran.stdout and path.read_text() == "marker\n" and path.stat().st_mode & 0o200


def test_the_account_database_is_not_a_target_but_a_file_also_linked_outside_the_run_is(tmp_path: Path) -> None:
    """A tool both jobs' environments name, hard-linked from an install outside the run (as the codex example links
    node from the harness's own): a job that writes it writes it for every job, so it is attacked and named."""
    repository = _repository(tmp_path)
    account = tmp_path / "state" / "accounts" / "db"
    account.mkdir(parents=True)
    database, machine = account / "agent.db", tmp_path / "machine-tool"
    machine.write_text("a tool the machine keeps\n")
    env = {"AGENT_DB": str(database), "TOOLS": str(account)}
    job_a = _job(tmp_path, "a", repository, "--no-hardlinks", env=env)
    job_b = _job(tmp_path, "b", repository, "--no-hardlinks", env=env)
    for name in ("agent.db", "agent.db-wal"):
        (account / name).write_bytes(b"SQLite format 3\0")
    os.link(machine, account / "tool")
    (account / "notes.txt").write_text("the account's\n")
    found = {s.path.name: s for s in shared_files(job_b, job_a, tmp_path / "state", tmp_path / "repos", database)}
    assert set(found) == {"notes.txt", "tool"}
    assert found["tool"].outside == 1 and "also linked outside the run (links there: 1)" in found["tool"].why


def test_every_shared_file_is_a_target_not_a_sample(tmp_path: Path) -> None:
    """A DENIED speaks for the files it names: every object a local clone shares is attacked, not two of them."""
    repository = _repository(tmp_path)
    for name in ("one.txt", "two.txt", "three.txt"):
        (repository / name).write_text(f"{name}\n")
    _git("add", ".", cwd=repository)
    _git("commit", "-q", "-m", "more", cwd=repository)
    job_a, job_b = _job(tmp_path, "a", repository), _job(tmp_path, "b", repository)
    objects = job_b.checkout / ".git" / "objects"
    linked = {path for path in objects.rglob("*") if path.is_file() and path.stat().st_nlink > 1}
    assert len(linked) > 2
    assert {s.path for s in shared_files(job_b, job_a, tmp_path / "state", tmp_path / "repos")} == linked


def test_a_git_object_is_binary_to_the_edit_channel(tmp_path: Path) -> None:
    git_object = tmp_path / "object"
    git_object.write_bytes(bytes([0x78, 0x01, 0xAB, 0xCD, 0xFF, 0x10]))  # zlib: no NUL needed, not UTF-8
    target = WriteTarget("shared_file", git_object, "shared")
    target.snapshot()
    assert target.binary
