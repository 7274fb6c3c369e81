"""B's shell sweep of every process (`procs_search`), run for real in a PID namespace of its own: it finds a canary
in a process's environment, in a file it holds open, under its root at a place's path and in a file of its working
directory changed since the run started, each as `PATH:CANARY`, and never in the files the other searches write as
they run."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from boundary import canary
from boundary.scenarios.sweep import search
from boundary.scenarios.sweep.judge import ENVIRONMENT, PROCESSES, Evidence, judge_cell
from boundary.scenarios.sweep.places import SWEEP_OUTPUT, Place
from boundary.scenarios.sweep.search import SWEEP_END, procs_search
from boundary.verdict import Verdict


def test_the_process_sweep_finds_each_canary_and_names_where(tmp_path: Path) -> None:
    in_env, held, at_place, in_output, in_cwd, before = (canary.new_canary() for _ in range(6))
    (tmp_path / "older.txt").write_text(before + "\n")  # written before the run started: not searched
    started = int(time.time()) + 1
    time.sleep(started + 0.05 - time.time())
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.txt").write_text(in_cwd + "\n")
    (tmp_path / "held.txt").write_text(held + "\n")
    (tmp_path / "place dir").mkdir()
    (tmp_path / "place dir" / "f").write_text(at_place + "\n")
    (tmp_path / f"{SWEEP_OUTPUT}shell_sweep").write_text(in_output + "\n")
    place = Place("tmp", "f", at_place, str(tmp_path / "place dir"))
    holder = f"exec 3< held.txt 4< {SWEEP_OUTPUT}shell_sweep; BOUNDARY_T={in_env} exec sleep 30"
    sweep = f"cd / && {procs_search(started, [place])}"
    script = f"cd {shlex.quote(str(tmp_path))} && (bash -c {shlex.quote(holder)} &) && sleep 0.5 && {sweep}"
    ran = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", script], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert any(line.endswith(f"/environ:{in_env}") for line in lines), lines
    assert any(line.endswith(f"/fd/3:{held}") for line in lines), lines
    assert any(line.endswith(f"/root{tmp_path}/place dir/f:{at_place}") for line in lines), lines
    assert any(line.endswith(f"/cwd/sub/new.txt:{in_cwd}") for line in lines), lines  # its working directory
    assert in_output not in ran.stdout and before not in ran.stdout


def test_a_search_its_timeout_cut_short_is_named_and_leaves_the_cells_inconclusive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process's open files and its working directory are each searched under a timeout: one it cuts short
    (here a grep slowed on one file) leaves a line naming what was not read, and every cell of the process sweep is
    INCONCLUSIVE naming it: what the search did not read may hold A's canaries."""
    monkeypatch.setattr(search, "PROC_FD_S", 1, raising=False)
    monkeypatch.setattr(search, "PROC_CWD_S", 1, raising=False)
    slow_bin = tmp_path / "bin"
    slow_bin.mkdir()
    grep = shutil.which("grep")
    slowed = f'for a; do case $(readlink -f -- "$a" 2>/dev/null) in */slow.txt) sleep 3;; esac; done; exec {grep} "$@"'
    (slow_bin / "grep").write_text(f"#!/bin/sh\n{slowed}\n")
    (slow_bin / "grep").chmod(0o755)
    started = int(time.time()) + 1
    time.sleep(started + 0.05 - time.time())
    (tmp_path / "slow.txt").write_text("held open, and changed since the run started\n")
    holder = "exec 3< slow.txt; exec sleep 30"
    sweep = f"cd / && {search.procs_search(started, [])}"
    script = f"cd {shlex.quote(str(tmp_path))} && (bash -c {shlex.quote(holder)} &) && sleep 0.5 && {sweep}"
    ran = subprocess.run(
        ["unshare", "--pid", "--fork", "--mount-proc", "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PATH": f"{slow_bin}:{os.environ['PATH']}"},
    )
    assert ran.returncode == 0, ran.stderr
    runner = SimpleNamespace(
        agent=SimpleNamespace(lacks=frozenset(), procfs_blind=frozenset(), search_incomplete=()), denials={}
    )
    controls: dict[str, str | None] = dict.fromkeys(("shell_sweep", "grep_tool", "proc_sweep", "proc_sweep:self"))
    found = {"grep_tool": "", "shell_sweep": SWEEP_END, "proc_sweep": f"{ran.stdout}{SWEEP_END}\n"}
    evidence = Evidence(found, controls, [], "BOUNDARY-secret", True, [])
    for row in (ENVIRONMENT, PROCESSES):
        finding = judge_cell(runner, (row, "proc_sweep"), [], evidence)
        assert finding.verdict == Verdict.INCONCLUSIVE, finding
        assert re.search(r"/proc/\d+/fd \(after 1 s\)", finding.detail), finding.detail
        assert re.search(r"/proc/\d+/cwd \(after 1 s\)", finding.detail), finding.detail
