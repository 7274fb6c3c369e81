"""What an interrupted sweep left on the host, removed by the next one.

Job A plants canaries outside every job's directory (the host's /tmp, /var/tmp, /dev/shm, and wherever else its
shell found it may write, `/` and `/etc` under no sandbox at all). A run cleans them as it ends; a run killed
before then (SIGKILL, a machine's time limit) cannot. So before A plants, the run's process writes a ledger
naming its places and where A's shell says it planted; it deletes the ledger once it has cleaned. The next run,
before it removes dead runs' work directories (A's shell's word is in one), reads every ledger whose process is
gone and removes each file that still holds that run's canary, or the canary line from a file it was appended to —
nothing else. The ledger names each canary by its SHA-256 only: it lies where jobs may read it (B's sweep of a
later scenario, or of this one, must not find A's canaries in the harness's own file).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from boundary import canary
from boundary.scenarios.sweep.discover import Discovery, read_discovery
from boundary.scenarios.sweep.places import SHELL_PLACES, Place, in_host, remove_canary, resolve

LEDGERS = Path(tempfile.gettempdir()) / ".boundary-sweep-ledgers"


Side = tuple[Path, list[Place], Discovery]  # a job's plant step's output file (as the harness reads it), its places


def record(root: Path, sides: list[Side], named: list[Place] | None = None) -> Path:
    """A ledger of this sweep's plants: A's, and B's own (its controls'), and those at paths the harness named
    (`named`: A's write tool's). It names each canary by its digest only: the ledger lies where jobs may read it,
    and B's sweep must find no canary of A's the harness wrote."""
    LEDGERS.mkdir(mode=0o700, exist_ok=True)
    ledger = LEDGERS / f"{os.getpid()}-{secrets.token_hex(4)}.json"
    entry = {
        "root": "/" if _same_tmp(root) else str(root),
        "sides": [
            {
                "said": str(said),
                "places": [[p.name, p.file, digest(p.token)] for p in places],
                "discovered": [[p.file, digest(p.token)] for p in discovery.places],
            }
            for said, places, discovery in sides
        ],
        "named": [[str(p.path), digest(p.token)] for p in named or [] if p.path],
    }
    ledger.write_text(json.dumps(entry))
    return ledger


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def remove(progress: Callable[[str], None]) -> None:
    """Every interrupted sweep's canaries still on this host, removed (a live sweep's are its own to clean)."""
    if not LEDGERS.is_dir():
        return
    for ledger in sorted(LEDGERS.glob("*.json")):
        if Path(f"/proc/{ledger.name.split('-')[0]}").exists():
            continue
        try:
            entry = json.loads(ledger.read_text())
            ledger.unlink()
        except FileNotFoundError:
            continue  # another worker of this run took it
        except ValueError:  # its process died writing it: nothing was planted yet
            ledger.unlink(missing_ok=True)
            continue
        removed = _remove_planted(entry)
        if removed:
            progress(f"[boundary] sweep: removed {len(removed)} canaries an interrupted run left: {', '.join(removed)}")


def _remove_planted(entry: dict[str, Any]) -> list[str]:
    root = Path(entry["root"])
    if not root.is_dir():
        return []  # that host's file system went with it (a container's, a namespace host's own)
    planted = [planted for side in entry["sides"] for planted in _planted(side)]
    for path, hashed in entry.get("named", []):
        where = Path(path)
        planted.append((Place("named", where.name, "", str(where.parent)), hashed))
    return [str(path) for place, hashed in planted if (path := _remove_if_held(place, hashed, root))]


def _planted(side: dict[str, Any]) -> list[tuple[Place, str]]:
    """Where a job planted outside its directories, as its shell said (the host-wide places also unsaid), each
    with its canary's digest. A file name with a `/` in it is no place's: a ledger is read as untrusted."""
    said_file = Path(side["said"])
    said = said_file.read_text(errors="replace") if said_file.is_file() else ""
    places = [(Place(name, file, ""), hashed) for name, file, hashed in side["places"]]
    resolve([place for place, _ in places], said)
    discovered = [(Place(f"discovered-{i}", file, ""), hashed) for i, (file, hashed) in enumerate(side["discovered"])]
    read_discovery(Discovery([place for place, _ in discovered]), said)
    for place, _ in places:  # the shell never said (killed while planting): a host-wide place has one name
        if place.directory is None and SHELL_PLACES.get(place.name, "").startswith("/"):
            place.directory = SHELL_PLACES[place.name]
    kept = [(p, h) for p, h in places if p.name in SHELL_PLACES] + [(p, h) for p, h in discovered if p.directory]
    return [(place, hashed) for place, hashed in kept if "/" not in place.file]


def _remove_if_held(place: Place, hashed: str, root: Path) -> Path | None:
    """The place's canary removed, if the file there holds a canary with the ledger's digest (anything else there
    is not the sweep's)."""
    path = in_host(place.path, root) if place.path else None
    try:
        content = path.read_bytes() if path is not None else b""
    except OSError:
        return None
    tokens = {token.decode() for token in re.findall(canary.PATTERN.encode(), content)}
    token = next((token for token in tokens if digest(token) == hashed), None)
    return remove_canary(dataclasses.replace(place, token=token), root) if token else None


def _same_tmp(root: Path) -> bool:
    """The jobs' host shares the harness's file system (the live host, a namespace host): the ledger names `/`,
    which outlives the host's process."""
    try:
        theirs, ours = (root / "tmp").stat(), Path("/tmp").stat()
    except OSError:
        return False
    return (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino)
