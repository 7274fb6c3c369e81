"""Files that job B shares with someone by inode: whoever writes such a file in place writes it for all.

A local `git clone` hard-links `.git/objects` to the repository it came from and so to every other checkout of
it; a `cp -al` template home, a cache file linked into each job, or one path named in both jobs' environments do
the same. Found from outside, before job B runs: every regular file in B's view (its checkout with `.git`, data,
the runner's files for it, TMPDIR, and what its environment names under STATE) whose device and inode are also
job A's, the repository's or elsewhere in the runner's state. Job B's write channels are aimed at its own path, and
the other copy is watched (`WriteTarget.seen_at`): a change there is WRITTEN.
"""

from __future__ import annotations

import os
import stat
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from boundary.runners.contract import Job
from boundary.writes.state import binary

PER_OWNER = 2  # files attacked per owner: one in-place write proves the class; each costs every channel a line


@dataclass(frozen=True)
class SharedFile:
    path: Path  # in job B's view: where B's channels write
    twin: Path  # the same inode where another sees it (the same path, when both views name it)
    whose: str  # "job A", "the repository" or "the runner's state"

    @property
    def why(self) -> str:
        same = "the same file" if self.twin == self.path else f"one inode with {self.twin}"
        return f"a file of job B's view that is {same}, {self.whose}'s"


def shared_files(
    job_b: Job, job_a: Job, state: Path, repositories: Path, account_db: Path | None = None
) -> list[SharedFile]:
    """What B's view shares with A's, the repository and the rest of STATE, at most `PER_OWNER` files per owner.
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
        # A link outside the run's own places is the machine's (a tool linked from a cache): never written.
        if not _under(path, b_roots) or _database(path, account_db) or links > len(by_identity[identity]):
            continue
        others = [o for o in by_identity[identity] if o != path and (_under(o, a_roots) or not _under(o, b_roots))]
        others.sort(key=lambda other: not _under(other, a_roots))  # job A's copy named first
        twin = path if _under(path, a_roots) else next(iter(others), None)  # one path in both views is A's too
        if twin is not None:
            whose = "job A" if _under(twin, a_roots) else _owner(twin, repositories)
            found.append(SharedFile(path, twin, whose))
    return _sample(sorted(found, key=lambda shared: str(shared.path)))


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


def _sample(shared: list[SharedFile]) -> list[SharedFile]:
    """At most `PER_OWNER` of each owner's, text first (the edit channel applies to text only)."""
    picked: list[SharedFile] = []
    for owner in dict.fromkeys(s.whose for s in shared):
        theirs = sorted((s for s in shared if s.whose == owner), key=lambda s: (_binary(s.path), str(s.path)))
        picked += theirs[:PER_OWNER]
    return picked


def _binary(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return binary(file.read(8192))
    except OSError:
        return True
