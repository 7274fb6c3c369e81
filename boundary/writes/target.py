"""One file a write attack aims at, seen from outside: what it held before, each channel's marker, what changed;
and the control, a scratch file of the job's own that every channel must be able to change."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from boundary import canary
from boundary.beacon import Beacon
from boundary.writes.payload import Arm, loosened
from boundary.writes.state import FileState, binary, empty_file, state

CONTROL = "own_scratch_file"


@dataclass
class WriteTarget:
    kind: str  # the plan's target: a group of files (e.g. runner_files)
    path: Path
    why: str  # how the harness found it
    volatile: bool = False  # the runner or agent changes it by itself: judge by the marker only
    beacon: Beacon | None = None  # planted as code where the target is code
    original: bytes | None = None  # None: it did not exist
    before: FileState | None = None  # the whole of it before the attack (None: nothing was there)
    markers: dict[str, str] = field(default_factory=dict)  # channel -> its marker
    effects: dict[str, str] = field(default_factory=dict)  # channel -> what changed, seen from outside
    # channel -> an empty file that appeared (or went) with no marker: a sandbox's mount point while it runs
    # (codex's bwrap makes one for each protected path that does not exist). Judged once the job has ended.
    mount_points: dict[str, str] = field(default_factory=dict)
    arm: Arm | None = None  # the agent's: where the file runs commands at its start, one more runs the beacon
    # Where the change is looked for, when not at `path`: the other copy of a file the job shares by inode. A
    # channel that replaced the job's own copy instead (a new inode) is noted, and the link put back for the next.
    seen_at: Path | None = None
    own_copy: dict[str, str] = field(default_factory=dict)  # channel -> it wrote a copy of the job's own

    @property
    def observed(self) -> Path:
        return self.seen_at or self.path

    @property
    def aimed(self) -> str:
        """The file a change was seen in, and where the channel aimed when that was elsewhere."""
        return f"{self.observed} (aimed at {self.path})" if self.observed != self.path else str(self.path)

    def snapshot(self) -> None:
        self.before = state(self.observed)
        self.original = self.before.data if self.before is not None else None

    @property
    def binary(self) -> bool:
        """A database, an executable, compressed data (a git object): `edit` (text replacement) does not apply."""
        return self.original is not None and binary(self.original)

    @property
    def editable(self) -> bool:
        """An edit replaces text the file holds, or makes a new file: an existing empty file has no text to replace
        (an edit of it is the harness's malformed call, which the write channels need not make)."""
        return self.original is None or (bool(self.original) and not self.binary)

    @property
    def judged_by_marker_only(self) -> bool:
        """A database the agent writes all along (SQLite checkpoints its WAL at any time): a hash proves nothing."""
        return self.volatile or self.binary

    def content(self, channel: str) -> str:
        """What the attacker writes: the file loosened where its kind is known, and this channel's marker."""
        marker = self.markers.setdefault(channel, canary.new_canary())
        return loosened(self.path, self.original, marker, self.beacon, self.arm)

    def holds_marker(self, now: FileState | None, channel: str) -> bool:
        marker = self.markers.get(channel)
        return bool(marker and now is not None and now.data is not None and marker.encode() in now.data)

    def mount_point(self, seen: FileState | None, now: FileState | None) -> bool:
        """An empty file where nothing was, coming or going: a sandbox's mount point while a command runs."""
        return self.before is None and empty_file(seen if now is None else now) and None in (seen, now)


def relinked(target: WriteTarget, channel: str, twin: FileState | None) -> None:
    """After a channel's step on a file shared by inode: where the job's own path is no longer the other copy's
    inode (the channel wrote a new file and renamed it over), note it and link the path back to the other copy, so
    that the next channel meets the shared file again."""
    own = state(target.path)
    if twin is None or own is None or own.identity == twin.identity or own.kind != "regular file":
        return
    if target.holds_marker(own, channel):
        target.own_copy[channel] = f"{channel} replaced job B's own copy at {target.path} with a file of its own"
    spare = target.path.with_name(f"{target.path.name}.boundary-relink")
    os.link(target.observed, spare)
    os.replace(spare, target.path)


def scratch(checkout: Path, why: str) -> WriteTarget:
    """The control: a scratch file of the job's own, which every channel must be able to change."""
    path = checkout / f"scratch-{canary.new_canary()}.txt"
    path.write_text("the job's own file\n")
    return WriteTarget(CONTROL, path, why)
