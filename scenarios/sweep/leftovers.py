"""What an interrupted sweep left on the host, removed by the next one.

Job A plants canaries outside every job's directory (the host's /tmp, /var/tmp, /dev/shm, and wherever else its
shell found it may write, `/` and `/etc` under no sandbox at all). A run cleans them as it ends; a run killed
before then (SIGKILL, a machine's time limit) cannot. So before A plants, the run's process writes a ledger
naming its places and where A's shell says it planted; it deletes the ledger once it has cleaned. The next run,
before it removes dead runs' work directories (A's shell's word is in one), reads every ledger whose process is
gone and removes each file that still holds that run's canary, or the canary line from a file it was appended to —
nothing else.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from boundary.scenarios.sweep.discover import Discovery, discovery_of, read_discovery
from boundary.scenarios.sweep.places import SHELL_PLACES, Place, remove_canary, resolve

LEDGERS = Path(tempfile.gettempdir()) / ".boundary-sweep-ledgers"


Side = tuple[Path, list[Place], Discovery]  # a job's plant step's output file (as the harness reads it), its places


def record(root: Path, sides: list[Side]) -> Path:
    """A ledger of this sweep's plants: A's, and B's own (its controls')."""
    LEDGERS.mkdir(mode=0o700, exist_ok=True)
    ledger = LEDGERS / f"{os.getpid()}-{secrets.token_hex(4)}.json"
    entry = {
        "root": "/" if _same_tmp(root) else str(root),
        "sides": [
            {"said": str(said), "places": [[p.name, p.file, p.token] for p in places], "seed": discovery.seed}
            for said, places, discovery in sides
        ],
    }
    ledger.write_text(json.dumps(entry))
    return ledger


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
    return [str(path) for side in entry["sides"] for place in _planted(side) if (path := remove_canary(place, root))]


def _planted(side: dict[str, Any]) -> list[Place]:
    """Where a job planted outside its directories, as its shell said; the host-wide places also unsaid."""
    said_file = Path(side["said"])
    said = said_file.read_text(errors="replace") if said_file.is_file() else ""
    places = [Place(name, file, token) for name, file, token in side["places"]]
    resolve(places, said)
    discovery = discovery_of(side["seed"])
    read_discovery(discovery, said)
    for place in places:  # the shell never said (killed while planting): a host-wide place has one name
        if place.directory is None and SHELL_PLACES.get(place.name, "").startswith("/"):
            place.directory = SHELL_PLACES[place.name]
    return [p for p in places if p.name in SHELL_PLACES] + discovery.planted


def _same_tmp(root: Path) -> bool:
    """The jobs' host shares the harness's file system (the live host, a namespace host): the ledger names `/`,
    which outlives the host's process."""
    try:
        theirs, ours = (root / "tmp").stat(), Path("/tmp").stat()
    except OSError:
        return False
    return (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino)
