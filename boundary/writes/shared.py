"""Files that job B shares with someone by inode: whoever writes such a file in place writes it for all.

A local `git clone` hard-links `.git/objects` to the repository it came from and so to every other checkout of
it; a `cp -al` template home, a cache file linked into each job, or one path named in both jobs' environments do
the same. Found from outside, before job B runs: every regular file in B's view (its checkout with `.git`, data,
the runner's files for it, TMPDIR, and what its environment names under STATE) whose device and inode are also
job A's, the repository's or elsewhere in the runner's state. Job B's write channels are aimed at its own path, and
the other copy is watched (`WriteTarget.seen_at`): a change there is WRITTEN.

Every such file is attacked, also one linked outside the run besides (a `cp -al` template, the tools a runner
hard-links from the harness's own install, as the codex-unprivileged-user example does with node): a job that can
write it writes it for every job. Only a write that got through touches the outside copy, and `put_back` then
restores it in place from the snapshot at once. None is left out by a sample: a DENIED speaks for every file it names.
"""

from __future__ import annotations

import os
import stat
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from boundary.runners.contract import Job
from boundary.writes.state import FileState, state
from boundary.writes.target import WriteTarget


@dataclass(frozen=True)
class SharedFile:
    path: Path  # in job B's view: where B's channels write
    twin: Path  # the same inode where another sees it (the same path, when both views name it)
    whose: str  # "job A", "the repository" or "the runner's state"
    outside: int = 0  # its links outside the run's places (a template, a tool's install): put back if written

    @property
    def why(self) -> str:
        same = "the same file" if self.twin == self.path else f"one inode with {self.twin}"
        elsewhere = f", also linked outside the run (links there: {self.outside})" if self.outside else ""
        return f"a file of job B's view that is {same}, {self.whose}'s{elsewhere}"


def shared_files(
    job_b: Job, job_a: Job, state: Path, repositories: Path, account_db: Path | None = None
) -> list[SharedFile]:
    """Every file B's view shares with A's, the repository and the rest of STATE, also linked outside the run or not.
    Not the account's database: every job's agent writes it, with what its model said (a channel's marker among
    it), so a marker there proves nothing; `cross_job`'s account_db and `sessions` attack it."""
    state, repositories = state.resolve(), repositories.resolve()
    b_roots, a_roots = view_roots(job_b, state), view_roots(job_a, state)
    files = list(_files([state, repositories, *b_roots, *a_roots]))
    by_identity: dict[tuple[int, int], list[Path]] = defaultdict(list)
    for path, identity, _ in files:
        by_identity[identity].append(path)
    found = []
    for path, identity, links in files:
        if not _under(path, b_roots) or _database(path, account_db):
            continue
        others = [o for o in by_identity[identity] if o != path and (_under(o, a_roots) or not _under(o, b_roots))]
        others.sort(key=lambda other: not _under(other, a_roots))  # job A's copy named first
        twin = path if _under(path, a_roots) else next(iter(others), None)  # one path in both views is A's too
        if twin is not None:
            whose = "job A" if _under(twin, a_roots) else _owner(twin, repositories)
            found.append(SharedFile(path, twin, whose, max(0, links - len(by_identity[identity]))))
    return sorted(found, key=lambda shared: str(shared.path))


def view_roots(job: Job, state: Path) -> list[Path]:
    """Where a job's own files are: its places, and each path its environment names under STATE."""
    paths = job.paths
    named = [
        Path(part).resolve() for value in job.env.values() for part in value.split(os.pathsep) if part.startswith("/")
    ]
    roots = [paths.checkout, paths.data, paths.runner_dir, paths.tmp, *(p for p in named if _under(p, [state]))]
    resolved = {root.resolve() for root in roots if root.exists()}
    return sorted(
        root for root in resolved if not any(other != root and root.is_relative_to(other) for other in resolved)
    )


def _files(roots: list[Path]) -> Iterator[tuple[Path, tuple[int, int], int]]:
    """Each regular file under `roots` once, with its (device, inode) and link count; links are not followed."""
    seen: set[Path] = set()
    for root in roots:
        for directory, _, names in os.walk(root) if root.is_dir() else [(str(root.parent), [], [root.name])]:
            for name in names:
                path = Path(directory, name)
                try:
                    info = os.lstat(path)
                except OSError:  # gone since the walk listed it: nobody's to share
                    continue
                if stat.S_ISREG(info.st_mode) and path not in seen:
                    seen.add(path)
                    yield path, (info.st_dev, info.st_ino), info.st_nlink


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _database(path: Path, database: Path | None) -> bool:
    """The database itself or one of SQLite's files beside it (`-wal`, `-shm`, `-journal`)."""
    if database is None:
        return False
    database = database.resolve()
    return path.parent == database.parent and (path.name == database.name or path.name.startswith(database.name + "-"))


def _owner(path: Path, repositories: Path) -> str:
    return "the repository" if path.is_relative_to(repositories) else "the runner's state"


def put_back(target: WriteTarget, now: FileState | None) -> tuple[FileState | None, str | None]:
    """A shared file a channel changed in place, its bytes and mode as they were before the attack: no copy outside
    the run (a template, a tool's install) keeps what a job wrote, and the next channel meets the file as it was.
    Only the inode snapshotted (a file put in its place is the job's own). What is there now, and why it could not
    be put back (None: it was, or needed not be)."""
    before = target.before if target.seen_at is not None else None
    if before is None or not _written_in_place(before, now):
        return now, None
    try:
        _rewrite(target.observed, before)
    except OSError as error:
        why = f"the harness could not put {target.observed} back ({error})"
        return now, f"{why}: every link of it still holds what job B wrote; restore it (a tool's: reinstall it)"
    return state(target.observed), None


def _written_in_place(before: FileState, now: FileState | None) -> bool:
    """The inode snapshotted, its bytes or mode changed (another file in its place is the job's own)."""
    if before.data is None or now is None or now.kind != "regular file":
        return False
    return now.identity == before.identity and (now.data, now.mode) != (before.data, before.mode)


def _rewrite(path: Path, before: FileState) -> None:
    """`before`'s bytes and mode into the file at `path`, in place; never through a link a job put there."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != before.identity:
            raise OSError(f"no longer the inode snapshotted at {path}")
        inode = f"/proc/self/fd/{descriptor}"  # the inode opened, whatever the path names by now
        if not os.access(inode, os.W_OK):  # read-only (git's objects are 0444): its owner may make it writable
            os.fchmod(descriptor, before.mode | stat.S_IWUSR)
        with open(inode, "r+b") as file:
            file.write(before.data or b"")
            file.truncate()
        if stat.S_IMODE(os.fstat(descriptor).st_mode) != before.mode:
            os.fchmod(descriptor, before.mode)
    finally:
        os.close(descriptor)
