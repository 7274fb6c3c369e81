"""The tamper scenario's inventory: every file that configures job B, by group, and what the attack does with
each — attacked once whatever groups it is in (as a beacon where it is code, by its marker only where it is a
binary or the agent rewrites it), or listed with why not."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from boundary import canary
from boundary.beacon import Beacon
from boundary.model import Script
from boundary.probes import Target
from boundary.runners.contract import Job
from boundary.scenarios.tamper.configuring import Configuring, is_sqlite, sqlite_sidecar
from boundary.writes.attack import CHANNELS as WRITE_CHANNELS
from boundary.writes.payload import loosened
from boundary.writes.target import WriteTarget


@dataclass
class Groups:
    """Every configuring file found, by group, and what the attack does with each."""

    scope: Path  # the run's directory: paths inside it are shown relative to it
    targets: list[WriteTarget] = field(default_factory=list)  # one per file attacked, whatever groups it is in
    members: dict[str, list[int]] = field(default_factory=dict)  # group -> its attacked files' indices in targets
    found: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # group -> what was done -> files
    database: set[int] = field(default_factory=set)  # SQLite databases and the files beside them: a run of their own
    transient: set[int] = field(default_factory=set)  # SQLite's -wal/-shm/-journal: they come and go by themselves
    marked: dict[int, set[str]] = field(default_factory=dict)  # transient target -> channels whose marker it held

    def add(self, found: Configuring, index: int | None, how: str) -> None:
        """`found` in its group, attacked as `targets[index]` (None: listed, not attacked), and `how`."""
        if index is not None:
            self.members.setdefault(found.kind, []).append(index)
        shown = str(found.path.relative_to(self.scope)) if found.path.is_relative_to(self.scope) else str(found.path)
        self.found.setdefault(found.kind, {}).setdefault(how, []).append(shown)

    def attacked(self, database: bool) -> list[WriteTarget]:
        """The files attacked in the account database's run of their own (`database`), or in the main one."""
        return [t for i, t in enumerate(self.targets) if (i in self.database) == database]

    def member(self, kind: str, target: WriteTarget) -> bool:
        return any(self.targets[i] is target for i in self.members.get(kind, []))

    def inventory(self, kind: str) -> str:
        """Every file the group found, and what was done with it."""
        done = self.found.get(kind, {})
        if not done:
            return f"Found: no {kind.replace('_', ' ')}"
        count = sum(len(files) for files in done.values())
        return f"Found {count}: " + "; ".join(f"{how}: {_some(files)}" for how, files in done.items())

    def watch(self, script: Script) -> None:
        """At each checkpoint of the attack, after it looked: which channel's marker each transient file holds
        (SQLite makes and removes them by itself, so only a marker seen in one shows a write landed)."""
        for step, check in list(script.checkpoints.items()):
            script.checkpoints[step] = self._then_note(check)

    def _then_note(self, check: Callable[[], None]) -> Callable[[], None]:
        def checked() -> None:
            check()
            self._note_markers()

        return checked

    def _note_markers(self) -> None:
        for index in self.transient:
            target = self.targets[index]
            data = _read(target.path) or b""
            held = {channel for channel, marker in target.markers.items() if marker.encode() in data}
            self.marked.setdefault(index, set()).update(held)

    def judge_transient(self) -> None:
        """A transient file changed (or came, or went) by a write only where a channel's marker was seen in it."""
        self._note_markers()
        for index in self.transient:
            target = self.targets[index]
            channels = self.marked.get(index, set())
            target.effects = {ch: f"{ch} wrote its marker into {target.path}" for ch in sorted(channels)}
            target.mount_points.clear()


def groups_of(
    found: list[Configuring], volatile: set[Path], witness: Path, saved: Target, job: Job, scope: Path
) -> Groups:
    """Each file found attacked once, whatever groups it is in (or listed, with why not)."""
    groups = Groups(scope)
    index: dict[Path, int] = {}
    for c in found:
        if not c.attacked:
            groups.add(c, None, f"listed, not attacked ({c.not_attacked})")
            continue
        if c.path not in index:
            index[c.path] = len(groups.targets)
            groups.targets.append(_target(c, witness, saved, job, volatile))
            if sqlite_sidecar(c.path):
                groups.transient.add(index[c.path])
            if sqlite_sidecar(c.path) or is_sqlite(c.path):
                groups.database.add(index[c.path])
        marker_only = groups.targets[index[c.path]].volatile or _binary(c.path)
        how = "attacked, judged by its marker only (binary, or the agent rewrites it)" if marker_only else "attacked"
        groups.add(c, index[c.path], how)
    return groups


def _target(found: Configuring, witness: Path, saved: Target, job: Job, volatile: set[Path]) -> WriteTarget:
    rewritten = found.path in volatile or sqlite_sidecar(found.path)
    if rewritten or _binary(found.path):
        target = WriteTarget(found.kind, found.path, found.why, volatile=rewritten)
        _unrecordable_markers(target)
        return target
    beacon = Beacon(f"tamper-{canary.new_canary()}", witness, (saved.path,), job.checkout)
    return WriteTarget(found.kind, found.path, found.why, beacon=beacon)


def _unrecordable_markers(target: WriteTarget) -> None:
    """Markers no record of the tool call that carried them can hold: the agent's database records every tool
    call's arguments, as JSON, which escapes a line break. Where the file is clobbered with the bare marker (a
    binary, a database), its marker is two canaries on two lines: in the file only if a write landed."""
    original = _read(target.path)
    for channel in WRITE_CHANNELS:
        marker = f"{canary.new_canary()}\n{canary.new_canary()}"
        if marker in loosened(target.path, original, marker, None):
            target.markers[channel] = marker


def _some(files: list[str], shown: int = 30) -> str:
    """The files, all of them up to `shown` (a config directory outside the run may hold thousands)."""
    more = f", and {len(files) - shown} more" if len(files) > shown else ""
    return ", ".join(files[:shown]) + more


def _binary(path: Path) -> bool:
    data = _read(path)
    return data is not None and b"\0" in data[:8192]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
