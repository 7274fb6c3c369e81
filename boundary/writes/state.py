"""A file as the harness sees it from outside, and what changed between two looks at it.

A file is more than its bytes: its type, link target, inode, link count, mode, owner and change time are
compared too (a configuring file replaced by a symlink or a hard link reads the same; one written and put back
keeps its bytes, not its change time).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FileState:
    """A path as the harness sees it from outside: enough to tell any change a job can make to it."""

    kind: str  # as `stat` names it: regular file, directory, symbolic link, …; or why it could not be looked at
    link: str | None  # a symbolic link's target
    identity: tuple[int, int]  # (device, inode): a file replaced, even by a hard link to the same bytes
    mode: int  # permission, set-id and sticky bits
    links: int  # its hard link count
    owner: tuple[int, int]  # (uid, gid)
    ctime_ns: int  # its change time: nothing sets it back, so a file written and put back shows here
    data: bytes | None  # what reading the path gives (through a symlink); None: no regular file to read


def state(path: Path) -> FileState | None:
    """What is at `path` now, seen from outside (None: nothing)."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:  # there, but not to be looked at: a state of its own, compared like any other
        return FileState(f"unreadable ({_code(error)})", None, (0, 0), 0, 0, (0, 0), 0, None)
    link = None
    if stat.S_ISLNK(info.st_mode):
        try:
            link = os.readlink(path)
        except OSError as error:
            link = f"unreadable ({_code(error)})"
    return FileState(
        _kind(info.st_mode),
        link,
        (info.st_dev, info.st_ino),
        stat.S_IMODE(info.st_mode),
        info.st_nlink,
        (info.st_uid, info.st_gid),
        info.st_ctime_ns,
        read_regular(path),
    )


def changed(before: FileState | None, after: FileState | None, by_marker_only: bool = False) -> str | None:
    """What changed between two looks at a path, in words; None: nothing. `by_marker_only`: a file the agent
    rewrites by itself (its bytes, inode and times change all along): only its type and link target count."""
    if before == after:
        return None
    if before is None or after is None:
        there = after if before is None else before
        assert there is not None
        if by_marker_only and there.kind == "regular file":  # the agent's file may come and go (SQLite's -shm)
            return None
        return f"it appeared{_as(after)}" if before is None else "it was removed"
    if before.kind != after.kind:
        return f"a {before.kind} became a {after.kind}{_to(after)}"
    if before.link != after.link:
        return f"the symbolic link now points to {after.link} (it pointed to {before.link})"
    if by_marker_only:
        return None
    changes = []
    if before.identity != after.identity:
        changes.append(f"it was replaced by another file (inode {before.identity[1]} → {after.identity[1]})")
    if before.links != after.links:
        changes.append(f"its hard link count went {before.links} → {after.links}")
    if before.mode != after.mode:
        changes.append(f"its mode changed {_mode(before.mode)} → {_mode(after.mode)}")
    if before.owner != after.owner:
        changes.append(f"its owner changed {before.owner[0]}:{before.owner[1]} → {after.owner[0]}:{after.owner[1]}")
    if before.data != after.data:
        changes.append(_describe(before.data, after.data))
    if not changes and before.ctime_ns != after.ctime_ns:
        changes.append("its change time moved, though it reads the same: written and put back, or its metadata changed")
    return "; ".join(changes) or None


def empty_file(seen: FileState | None) -> bool:
    return seen is not None and seen.kind == "regular file" and seen.data == b""


def device(directory: Path) -> int | None:
    """The device of the directory, or of its nearest ancestor there, from outside."""
    for place in (directory, *directory.parents):
        try:
            return place.stat().st_dev
        except OSError:
            continue
    return None


def binary(data: bytes) -> bool:
    """Not text an edit could replace: a NUL in its start (a database, an executable), or not UTF-8 (compressed
    data, a git object). `data` may be a file's start: a character cut short at its end is still text."""
    try:
        data.decode()
    except UnicodeDecodeError as error:
        return error.start < len(data) - 3
    return b"\0" in data[:8192]


def read_regular(path: Path) -> bytes | None:
    """The bytes of the regular file at path (through a symlink); None for anything else: a FIFO or a device
    put in a file's place must not hang the harness or feed it forever."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as file:
        try:
            return file.read() if stat.S_ISREG(os.fstat(descriptor).st_mode) else None
        except OSError:
            return None


_KINDS = {
    stat.S_IFREG: "regular file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symbolic link",
    stat.S_IFCHR: "character special file",
    stat.S_IFBLK: "block special file",
    stat.S_IFIFO: "fifo",
    stat.S_IFSOCK: "socket",
}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "file of unknown type")


def _as(after: FileState | None) -> str:
    if after is None or after.kind == "regular file":
        return ""
    return f" as a {after.kind}{_to(after)}"


def _to(after: FileState) -> str:
    return f" to {after.link}" if after.link is not None else ""


def _mode(mode: int) -> str:
    return stat.filemode(mode)[1:]


def _code(error: OSError) -> str:
    return errno.errorcode.get(error.errno or 0, type(error).__name__)


def _describe(before: bytes | None, after: bytes | None) -> str:
    if before is None or after is None:
        return "it became readable" if before is None else "it is no longer readable"
    if len(before) == len(after):
        return f"its {len(after)} bytes changed"
    return f"{len(before)} → {len(after)} bytes"
