"""Directories a pinned sandbox's defaults let every job it confines write, once they exist.

A fresh host lacks them, so a runner that keeps such a default passes there, and its jobs share the
directory as soon as anything (a Claude Code run on the host, another runner, an operator) has made it.
So the harness makes each one before a unit's jobs run, inside the host they run on, and removes what it
made once no unit on that host holds it any more: a PASS never rests on a clean host.

Found in the pinned sources, srt 0.0.83's `dist/sandbox/sandbox-utils.js` (Claude Code 2.1.332 embeds the same):
- `/tmp/claude`: `generateProxyEnvVars` sets every sandboxed command's TMPDIR to it unless CLAUDE_CODE_TMPDIR
  (or CLAUDE_TMPDIR) names another, and `SANDBOX_OWN_WRITE_PATHS` keeps it writable whatever the policy says
  (`/private/tmp/claude` there is macOS's spelling of it);
- `~/.npm/_logs`, `~/.claude/debug`: `HOME_CONVENIENCE_WRITE_DIRS`, writable unless a `denyRead` covers them,
  so shared by every job of a runner that gives its jobs one HOME.
codex 0.171's sandbox shares `/tmp` and `$TMPDIR` in `workspace-write` (`:slash_tmp`, `:tmpdir`): on every host.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HOME = "$HOME"
REGISTRY = Path("tmp/.boundary-shared-dirs")  # under a host's root: units on one host agree on who made what


@dataclass(frozen=True)
class SharedDefault:
    place: str  # the sweep's name for it
    base: str  # an absolute directory every host has, or $HOME: the HOME the job's shell sees
    sub: str  # the directory under it

    @property
    def where(self) -> str:
        """As a shell names it."""
        return f"{self.base}/{self.sub}"

    @property
    def srt_spelling(self) -> str:
        """As srt's settings name it (`~` is the sandboxed command's HOME)."""
        return f"~/{self.sub}" if self.base == HOME else self.where


SHARED_DEFAULTS = (
    SharedDefault("tmp_claude", "/tmp", "claude"),
    SharedDefault("npm_logs", HOME, ".npm/_logs"),
    SharedDefault("claude_debug", HOME, ".claude/debug"),
)

Wanted = tuple[Path, str]  # (a directory that must exist already, a directory under it to make)


def srt_spellings() -> list[str]:
    """Each, as srt's settings (and Claude Code's sandbox settings) name it, e.g. to deny writing it."""
    return [d.srt_spelling for d in SHARED_DEFAULTS]


def on_every_host() -> list[Wanted]:
    return [(Path(d.base), d.sub) for d in SHARED_DEFAULTS if d.base != HOME]


def in_home(home: Path) -> list[Wanted]:
    return [(home, d.sub) for d in SHARED_DEFAULTS if d.base == HOME]


@contextmanager
def present(root: Path, wanted: Sequence[Wanted]) -> Iterator[list[Path]]:
    """Each wanted directory exists in the host whose `/` is `root` until the block ends; yields those made here.

    What the harness made goes once no unit holds it (each holds a shared lock on it, which dies with a
    killed harness: the next unit to let go removes it then).
    """
    registry = root / REGISTRY
    registry.mkdir(mode=0o700, parents=True, exist_ok=True)
    held: list[tuple[Path, int]] = []
    made: list[Path] = []
    try:
        with _registry_locked(registry):
            for base, sub in wanted:
                if (root / _inside(base)).is_dir():
                    directory = base / sub
                    made += _make(root, registry, directory)
                    held.append((directory, _hold(registry, directory)))
        yield made
    finally:
        with _registry_locked(registry):
            for directory, fd in held:
                _let_go(root, registry, directory, fd)


def _inside(path: Path) -> Path:
    return path.relative_to("/") if path.is_absolute() else path


def _key(directory: Path) -> str:
    return hashlib.sha256(os.fsencode(directory)).hexdigest()[:16]


@contextmanager
def _registry_locked(registry: Path) -> Iterator[None]:
    """One unit at a time makes, holds or removes (the lock file stays: others may be waiting on it)."""
    fd = os.open(registry / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _make(root: Path, registry: Path, directory: Path) -> list[Path]:
    """Make the directory if it is missing, each new level like the one it is made in (mode and owner: under
    /tmp, open to every user as /tmp is); record the topmost level made. Returns [directory] if made here."""
    inside = root / _inside(directory)
    if inside.exists() or inside.is_symlink():
        return []
    missing = [p for p in [inside, *inside.parents] if not p.exists() and not p.is_symlink()]
    for level in reversed(missing):
        parent = level.parent.stat()
        level.mkdir()
        with contextlib.suppress(PermissionError):  # not root: it stays the harness user's
            os.chown(level, parent.st_uid, parent.st_gid)
        level.chmod(parent.st_mode & 0o7777)
    top = Path("/") / missing[-1].relative_to(root)
    (registry / f"{_key(directory)}.made").write_text(str(top))
    return [directory]


def _hold(registry: Path, directory: Path) -> int:
    fd = os.open(registry / f"{_key(directory)}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def _let_go(root: Path, registry: Path, directory: Path, fd: int) -> None:
    """Drop this unit's hold; the last holder removes what the harness made (the registry lock is held)."""
    key = _key(directory)
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another unit still runs jobs with it there
        made = registry / f"{key}.made"
        if made.exists():
            shutil.rmtree(root / _inside(Path(made.read_text())), ignore_errors=True)
            made.unlink()
        (registry / f"{key}.lock").unlink(missing_ok=True)
    finally:
        os.close(fd)
