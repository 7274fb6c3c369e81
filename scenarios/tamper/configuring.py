"""Find, without the runner's help, every file that configures a job.

- runner_files: each file the runner created for the job outside its checkout (a
  snapshot of the run's directory before and after `create_job`), or in the checkout but not
  part of the repository; each file the runner says it wrote; the account's shared database;
- launch_files: each file named by the job's argv and environment, and the files those
  name in turn (a wrapper names its sandbox settings; a config names its plugins);
- agent_config: the agent's config directories (what it loads from them, and a plugin
  a job could plant there);
- project_config: every project-level path the agent reads in the checkout, and the
  git configuration and hooks the runner's own git would run.

A file may belong to several groups (the launch script the runner created is a runner file
and a launch file). Next to every SQLite database found, its write-ahead log, shared memory
and rollback journal are configuring files too: SQLite replays them into the database when
it opens it, so a job that writes one rewrites the database.

Every file found is returned, with what the harness does with it: files inside the run's
directory are attacked; a file outside it is listed, not written (the pinned tools and the
system are shared by every run, and by whatever else runs on this machine).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from boundary.layout import SAFE_GIT, git
from boundary.runners.contract import Job, Runner

KINDS = ("runner_files", "launch_files", "agent_config", "project_config")
MAX_SCAN_BYTES = 256 * 1024
_ABSOLUTE = re.compile(r"(?:file://)?(/[A-Za-z0-9._@%+=,/-]+)")  # ':' ends a path: it separates lists of them
SQLITE_HEADER = b"SQLite format 3\0"
# What SQLite keeps beside a database, and replays into it when it opens it: a job that writes one rewrites it.
SQLITE_SIDECARS = {
    "-wal": "its write-ahead log: replayed into the database when it is opened",
    "-shm": "its shared-memory index of the write-ahead log",
    "-journal": "its rollback journal: a hot journal is rolled back into the database when it is opened",
}
OUTSIDE = "outside the run's directory: the pinned tools and the system are shared by every run"
KERNEL_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))  # kernel objects, not files a job reads its config from


@dataclass(frozen=True)
class Configuring:
    kind: str
    path: Path
    why: str  # how the harness found it
    not_attacked: str = ""  # why the harness lists it but does not write it; "": it is attacked

    @property
    def attacked(self) -> bool:
        return not self.not_attacked


def snapshot(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()} if root.exists() else set()


def discover(runner: Runner, job: Job, created: set[Path], scope: Path) -> list[Configuring]:
    """Every configuring file of `job`, one entry per (group, file); `created` are the files that appeared while
    the runner created it. Files outside `scope` (the run's directory) are listed with why they are not attacked."""
    found: dict[tuple[str, Path], Configuring] = {}

    def add(kind: str, path: Path, why: str) -> None:
        path = Path(os.path.normpath(path))
        if (kind, path) not in found and (_is_file(path) or not path.exists()):
            found[(kind, path)] = Configuring(kind, path, why, "" if _inside(path, scope) else OUTSIDE)

    repository = _repository_files(job.checkout, created)
    for path in sorted(created):
        if path.is_symlink() or path in repository:
            continue
        if _inside(path, job.checkout):
            add("runner_files", path, "created by the runner in the job's checkout, not part of its repository")
        else:
            add("runner_files", path, "created by the runner for this job, outside its checkout")
    for path in job.files:
        add("runner_files", path, "the runner says it wrote it for this job")
    account_db = _account_db(runner)
    if account_db is not None and account_db.exists():
        add("runner_files", account_db, "the account's database, shared by every job of the account")
    for path, why in _named_by_launch(job):
        add("launch_files", path, why)
    named_from = [c.path for c in found.values() if c.attacked]
    for path, why in _named_in_turn(named_from, scope):
        add("launch_files", path, why)
    for directory in runner.agent.config_dirs(job.env):
        for path in _files_or_plant(directory, runner.agent.config_plant):
            add("agent_config", path, f"in the agent's config directory {directory}")
    for relative, why in runner.agent.project_config_paths():
        add("project_config", job.checkout / relative, why)
    for (kind, path), entry in list(found.items()):
        if is_sqlite(path):
            for suffix, what in SQLITE_SIDECARS.items():
                add(kind, Path(f"{path}{suffix}"), f"beside the database {path.name} ({entry.why}): {what}")
    return list(found.values())


def _repository_files(checkout: Path, created: set[Path]) -> set[Path]:
    """The created files that are the repository's (tracked, or git's own under .git/), not the runner's."""
    in_checkout = {p for p in created if _inside(p, checkout)}
    ours = {p for p in in_checkout if _inside(p, checkout / ".git")}
    if not in_checkout - ours:
        return ours
    try:
        tracked = git(*SAFE_GIT, "ls-files", "-z", cwd=checkout).split("\0")
    except (RuntimeError, OSError):  # not a git checkout: every file in it is the job's own, as a repository's are
        return in_checkout
    return ours | {Path(os.path.normpath(checkout / name)) for name in tracked if name}


def _account_db(runner: Runner) -> Path | None:
    account_db = getattr(runner, "account_db", None)
    try:
        path = account_db() if callable(account_db) else None
    except (OSError, RuntimeError, ValueError):  # a runner not set up yet has none to name
        return None
    return None if path is None else Path(path)


def _named_by_launch(job: Job) -> list[tuple[Path, str]]:
    """Files an argument or a variable names: whole (`/x/settings.json`), in a list (`PATH=/a:/b`), or inside a
    longer value (`--settings=/x/settings.json`, `NODE_OPTIONS=--require /x/hook.js`)."""
    named = [(Path(p), f"named by argv[{i}]") for i, a in enumerate(job.argv) for p in _absolute_paths(a)]
    for key, value in job.env.items():
        named += [(Path(p), f"named by ${key}") for p in _absolute_paths(value)]
    return [(p, why) for p, why in named if _is_file(p)]  # a file named twice is added once, as first named


def _absolute_paths(text: str) -> list[str]:
    return [match.rstrip(",.:") for match in _ABSOLUTE.findall(text)]


def _named_in_turn(paths: list[Path], scope: Path) -> list[tuple[Path, str]]:
    """Absolute paths (and file:// URIs) written in the given files, followed until none is new. A file outside
    `scope` is named (and listed) but not followed: the system's files name half the system."""
    seen, queue, named = set(paths), list(paths), []
    while queue:
        source = queue.pop()
        for path in _paths_in(source):
            if path not in seen and _is_file(path):
                seen.add(path)
                named.append((path, f"named in {source}"))
                if _inside(path, scope):
                    queue.append(path)
    return named


def _paths_in(source: Path) -> list[Path]:
    try:
        data = source.read_bytes()[:MAX_SCAN_BYTES]
    except OSError:
        return []
    if b"\0" in data[:8192]:  # a database or a binary: it names paths in passing, it does not configure them
        return []
    return [Path(path) for path in _absolute_paths(data.decode(errors="ignore"))]


def _files_or_plant(directory: Path, plant: tuple[str, ...]) -> list[Path]:
    existing = [p for p in directory.rglob("*") if p.is_file() and "node_modules" not in p.parts]
    return existing + [directory / relative for relative in plant]


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _is_file(path: Path) -> bool:
    if any(path.is_relative_to(tree) for tree in KERNEL_TREES):
        return False  # e.g. /proc/1/ns/net: a regular file to stat, where root may stat it
    try:
        return path.is_file()
    except OSError:  # e.g. a /proc entry only its owner may stat
        return False


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def sqlite_sidecar(path: Path) -> bool:
    """One of the files SQLite keeps beside a database (it makes and removes them by itself)."""
    return any(path.name.endswith(s) and is_sqlite(path.with_name(path.name[: -len(s)])) for s in SQLITE_SIDECARS)
