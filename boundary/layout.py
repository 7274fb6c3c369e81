"""Runner state on disk: account, repository, and per-job checkout + data dir.

<state>/accounts/<account>/opencode.db    shared by the account's jobs
<state>/repos/<repo>.git                   a real git repository
<state>/checkouts/<job>/                   the job's checkout
<state>/checkouts/<job>.data/              its data dir (XDG_DATA_HOME), removed with it
<state>/runner/<job>/                      what configures the job (agent config, shell sandbox, launcher):
                                           no channel of the job reaches it
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from boundary import proc

GIT_IDENTITY = ["-c", "user.name=boundary", "-c", "user.email=boundary@localhost"]
GIT_TIMEOUT_S = 60.0  # local operations only: a git that takes longer is stuck


class _Subdir:
    """A job directory named `name` inside another of the job's paths (the attribute `root`), read as a property:
    the layout as a table, not one property per directory."""

    def __init__(self, root: str, name: str) -> None:
        self.root, self.name = root, name

    def __get__(self, paths: JobPaths, owner: type[JobPaths] | None = None) -> Path:
        root: Path = getattr(paths, self.root)
        return root / self.name


@dataclass(frozen=True)
class JobPaths:
    name: str
    checkout: Path
    data: Path  # XDG_DATA_HOME: opencode's saved output, logs, snapshots
    private: Path | None = None  # the runner's files for this job; None: kept in the data dir (within reach)
    scratch: Path | None = None  # TMPDIR; None: in the data dir. Kept short: srt puts Unix sockets in it

    @property
    def runner_dir(self) -> Path:
        return self.private or self.data

    # HOME and the XDG directories: config and HOME among the runner's files, cache and state in the job's data.
    config_home = _Subdir("runner_dir", "config")
    home = _Subdir("runner_dir", "home")
    cache_home = _Subdir("data", "cache")
    state_home = _Subdir("data", "state")

    @property
    def tmp(self) -> Path:
        return self.scratch or self.data / "tmp"

    def create_dirs(self) -> None:
        for path in (self.config_home, self.home, self.cache_home, self.state_home, self.tmp):
            path.mkdir(parents=True, exist_ok=True)

    def remove(self) -> None:
        for path in (self.checkout, self.data, self.runner_dir, self.tmp):
            shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class RunnerLayout:
    state: Path
    account: str = "account"

    @property
    def account_dir(self) -> Path:
        return self.state / "accounts" / self.account

    @property
    def account_db(self) -> Path:
        return self.account_dir / "opencode.db"

    @property
    def checkouts(self) -> Path:
        return self.state / "checkouts"

    def job(self, name: str) -> JobPaths:
        checkout = self.checkouts / name
        private, scratch = self.state / "runner" / name, self.state / "tmp" / name
        return JobPaths(name, checkout, checkout.with_name(f"{name}.data"), private, scratch)

    def create(self) -> None:
        for path in (self.account_dir, self.checkouts):
            path.mkdir(parents=True, exist_ok=True)


def git(*args: str, cwd: Path | None = None) -> str:
    result = proc.run(["git", *GIT_IDENTITY, *args], cwd=cwd, timeout=GIT_TIMEOUT_S, what=f"`git {' '.join(args)}`")
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed (exit {result.returncode}): {result.stderr.strip()}")
    return result.stdout.strip()


def create_repository(path: Path, files: dict[str, str]) -> Path:
    """A real (bare) git repository with one commit holding `files`."""
    work = path.with_name(path.name + ".work")
    work.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=work)
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "boundary test repository", cwd=work)
    git("clone", "-q", "--bare", str(work), str(path))
    shutil.rmtree(work)
    return path


def push_commit(repository: Path, files: dict[str, str], symlinks: dict[str, Path], message: str) -> None:
    """Add a commit to a bare repository: files, and symlinks committed as such (as a hostile repository can)."""
    work = repository.with_name(repository.name + ".push")
    git("clone", "-q", str(repository), str(work))
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    for name, target in symlinks.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).symlink_to(target)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", message, cwd=work)
    git("push", "-q", "origin", "HEAD:main", cwd=work)
    shutil.rmtree(work)


# The runner's own git runs no code the repository or a job could have put in place: no hooks, no fsmonitor.
SAFE_GIT = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.file.allow=always"]


def clone(repository: Path, checkout: Path, hard_links: bool = False) -> None:
    """The job's own copy: a local clone hard-links `.git/objects` to the repository and so to every other job's
    checkout (`hard_links`: as git does by default), and a job that may write its `.git` would then write theirs
    (cross_job_writes' shared_file)."""
    git(*SAFE_GIT, "clone", "-q", *([] if hard_links else ["--no-hardlinks"]), str(repository), str(checkout))


def project_id(checkout: Path) -> str:
    """opencode names a project by its repository's root commit."""
    return git("rev-list", "--max-parents=0", "HEAD", cwd=checkout).splitlines()[0]
