"""The sweep's commands fit the agent that runs them: Claude Code asks before it runs a command of 10,000
characters or more (and nobody answers in a job), so even at the cap of discovered places, with long random
paths, job A's plant step and job B's searches stay under that."""

from __future__ import annotations

import gzip
import os
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from boundary import canary
from boundary.agents.claude import ClaudeCode
from boundary.model import Script
from boundary.scenarios.sweep import ipc as sweep_ipc
from boundary.scenarios.sweep.discover import CAP, discover_lines, new_discovery
from boundary.scenarios.sweep.forms import decoded, write_search_files
from boundary.scenarios.sweep.places import SHELL_PLACES, SWEEP_OUTPUT, places_of, plant_steps
from boundary.scenarios.sweep.search import ProcessView, add_searches, files_search

CLAUDE_ASKS_AT = 10_000
STATE = "/tmp/bnd-run-123456-abcdefgh/u0/state"


def _commands(script: Script) -> dict[str, int]:
    return {call.id: len(call.args.get("command", "")) for step in script.steps for call in step}


def test_the_plant_and_the_searches_fit_claude_code_at_the_cap() -> None:
    runner = SimpleNamespace(agent=ClaudeCode())
    job = SimpleNamespace(checkout=Path(f"{STATE}/checkouts/job-b.data-a"))
    places = places_of(job)  # type: ignore[arg-type]
    for place in places:
        place.directory = place.directory or f"{STATE}/tmp/job-b.data-a/{secrets.token_hex(8)}"
    discovery = new_discovery()
    for index, place in enumerate(discovery.places):
        place.directory, place.how = f"{STATE}/tmp/job-b.data-a/claude-0/{secrets.token_hex(8)}/d{index}", "mount"
    assert len(discovery.places) == CAP
    plant, search = Script(), Script()
    plant_steps(runner, plant, places, "a", job.checkout, discover_lines(discovery))  # type: ignore[arg-type]
    ipc = sweep_ipc.search_lines(sweep_ipc.IpcTokens.new(), sweep_ipc.IpcTokens.new())
    add_searches(runner, search, job, 1, [*places, *discovery.places], ProcessView([11, 12, 13, 14]), ipc)  # type: ignore[arg-type]
    lengths = {**_commands(plant), **_commands(search)}
    assert len([p for p in places if p.name in SHELL_PLACES]) == len(SHELL_PLACES)
    assert lengths["a-plant"] < CLAUDE_ASKS_AT and lengths["sweeps"] < CLAUDE_ASKS_AT, lengths


def test_the_files_search_walks_the_whole_file_system(tmp_path: Path) -> None:
    """B's walk, run by bash: `/` split into its entries (two walks at once) still finds each file changed since the
    start, however deep, a back-dated one by its change time, a compressed one (listed apart, as small), and one in
    its working directory; never its own outputs."""
    started = int(time.time()) - 1
    tokens = {name: canary.new_canary() for name in ("fresh", "deep", "back-dated", "own")}
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "fresh.txt").write_text(tokens["fresh"])
    (tmp_path / "a" / "b" / "deep.txt").write_text(tokens["deep"])
    (tmp_path / "old.txt").write_text(tokens["back-dated"])
    (tmp_path / "log.gz").write_bytes(gzip.compress(tokens.setdefault("gzip'd", canary.new_canary()).encode()))
    os.utime(tmp_path / "old.txt", (started - 100, started - 100))  # its mtime back-dated; its ctime cannot be
    work = tmp_path / "work"
    work.mkdir()
    (work / "own.txt").write_text(tokens["own"])
    (work / f"{SWEEP_OUTPUT}earlier").write_text(hidden := canary.new_canary())  # a sweep's own: never searched
    write_search_files(work, [])  # the pattern every canary matches, no form
    # A directory two levels down (where `/` is split into walks) whose name holds a line break.
    odd = Path(tempfile.gettempdir()) / f"boundary-test-{secrets.token_hex(4)}\nsplit"
    odd.mkdir()
    try:
        (odd / "in-odd.txt").write_text(tokens.setdefault("odd", canary.new_canary()))
        found = subprocess.run(
            ["bash", "-c", files_search(started, [])], cwd=work, capture_output=True, text=True, timeout=120
        ).stdout
    finally:
        shutil.rmtree(odd)
    found = decoded(found, list(tokens.values()))
    assert {name for name, token in tokens.items() if token not in found} == set()
    gzipped = tokens["gzip'd"]
    assert f"gzip copy in {tmp_path}/log.gz:{gzipped}" in found.splitlines()
    assert hidden not in found
