"""The sweep finds where job A may write (issue 16, item 13): every directory its environment names, every highest
writable directory of its view, every writable mount point; a canary in each; one cell per file channel."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from boundary.scenarios.sweep import discover as sweep_discover
from boundary.scenarios.sweep.discover import (
    DISCOVERED,
    NOT_PLANTED,
    Discovery,
    Sides,
    discover_lines,
    host_run_devices,
    judge_discovered,
    new_discovery,
    read_discovery,
)
from boundary.scenarios.sweep.places import Place, clean, resolve
from boundary.scenarios.sweep.search import changed_since
from boundary.verdict import Verdict

DENIALS = {"OS sandbox": ("Read-only file system", "Permission denied", "No such file or directory")}


def _runner() -> Any:
    return SimpleNamespace(agent=SimpleNamespace(lacks=frozenset()), denials=DENIALS)


def _discover(
    tmp_path: Path, discovery: Discovery, env: dict[str, str], table: str = "", read_only: Path | None = None
) -> str:
    """The shell's discovery kept to tmp_path: its walk starts in `top`, its mount table names `top/bind` (and
    `table`'s lines). `read_only`: a directory it sees read-only (in a mount namespace of its own), but for the
    files in it, each bound writable."""
    top, checkout = tmp_path / "top", tmp_path / "checkout"
    for directory in (top / "bind", checkout):
        directory.mkdir(parents=True, exist_ok=True)
    mounts = tmp_path / "mountinfo"
    mounts.write_text(f"1 0 0:1 / {top / 'bind'} rw - tmpfs x rw\n2 0 0:2 / /proc rw - proc proc rw\n{table}")
    text = "exec 2>&1\n" + discover_lines(discovery, str(top), str(mounts))
    command = ["bash", "-c", text]
    if read_only is not None:
        d = shlex.quote(str(read_only))
        binds = f"for f in {d}/*; do mount --bind $f $f; done; mount --rbind {d} {d} && mount -o remount,bind,ro {d}"
        command = ["unshare", "--mount", "bash", "-c", f'{binds} && exec bash -c "$0"', text]
    env = {"PATH": os.environ["PATH"], **env}
    said = subprocess.run(command, capture_output=True, text=True, env=env, cwd=checkout).stdout
    resolve(discovery.places, said)
    read_discovery(discovery, said)
    return said


def test_the_shell_plants_where_its_environment_its_walk_and_its_mounts_say(tmp_path: Path) -> None:
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    discovery = new_discovery()
    _discover(tmp_path, discovery, {"npm_config_cache": str(shared), "HOME": str(tmp_path / "none")})
    planted = {p.how: p for p in discovery.planted}
    assert planted["env-npm_config_cache"].directory == str(shared)
    assert planted["mount"].directory == str(tmp_path / "top/bind")  # a bind inside a writable tree: its own place
    writable_top = os.access(tmp_path / "top", os.W_OK)
    assert ("walk" in planted) == writable_top
    assert all(p.wrote and (p.path and p.path.read_text().strip() == p.token) for p in discovery.planted)
    assert discovery.ended
    listed = dict((d, how) for how, d in discovery.writable)
    assert listed[str(tmp_path / "checkout")] == "env-PWD"  # the fixed places are listed, not planted twice
    assert str(tmp_path / "checkout") not in {p.directory for p in discovery.planted}


def test_the_walk_skips_read_only_mounts_but_not_the_writable_mounts_inside_them(tmp_path: Path) -> None:
    """Nothing under a read-only mount is writable through it, so the walk does not read it (a sandbox that mounts
    `/` read-only made the walk read the whole file system); a writable mount inside one is walked from its own
    mount point, down to its first writable directories. The last mount on a path is the one in force."""
    top = tmp_path / "top"
    (top / "other").mkdir(parents=True)
    (top / "with space").mkdir()
    stacked = tmp_path / "stacked"
    stacked.mkdir()
    table = (
        f"3 0 0:3 / {top} ro,relatime - ext4 x ro\n"
        f"4 0 0:4 / {str(top / 'with space').replace(' ', chr(92) + '040')} rw - tmpfs x rw\n"
        f"5 0 0:5 / {stacked} ro - ext4 x ro\n6 0 0:6 / {stacked} rw - tmpfs x rw\n"
    )
    discovery = new_discovery()
    _discover(tmp_path, discovery, {"HOME": str(tmp_path / "none")}, table)
    listed = {directory: how for how, directory in discovery.writable}
    assert listed[str(top / "bind")] == "mount"
    assert str(top) not in listed and str(top / "other") not in listed
    assert listed[str(stacked)] == "mount"  # a writable tmpfs over a read-only mount
    assert listed[str(top / "with space")] == "mount"  # the table's escapes read back


def test_the_cap_leaves_places_named_and_the_cell_unproven(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_discover, "CAP", 1)
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    discovery = new_discovery()
    said = _discover(tmp_path, discovery, {"npm_config_cache": str(shared)})
    assert len(discovery.planted) == 1 and f"{NOT_PLANTED} " in said and "over the cap of 1" in said
    own = Discovery([], ended=True)
    sides = Sides(discovery, own, str(tmp_path / "checkout"), ("a", "b"))
    finding = judge_discovered("shell_sweep", "", {}, sides, None, [], _runner())
    assert finding.verdict == Verdict.INCONCLUSIVE and "did not plant in" in finding.detail
    assert "over the cap of 1" in finding.detail  # every place not planted is named


def _sides(a_dir: str = "/var/cache/shared", b_found: bool = True, how: str = "env-npm_config_cache") -> Sides:
    a = Discovery([Place("discovered-0", "f-a", "BOUNDARY-a0", a_dir, held=True, how=how)], ended=True)
    b = Discovery([Place("discovered-0", "f-b", "BOUNDARY-b0", a_dir, held=True, how=how)], ended=True)
    a.writable = [("env-PWD", "/s/checkouts/job-a"), (how, a_dir)]
    b.writable = [("env-PWD", "/s/checkouts/job-b")]
    return Sides(a, b, "/s/checkouts/job-a", ("job-a", "job-b")) if b_found else Sides(a, b, "/s/checkouts/job-a")


def test_a_canary_of_as_found_names_the_place_and_how_it_was_found() -> None:
    result = "/var/cache/shared/f-a:BOUNDARY-a0\nboundary-sweep-end\n"
    finding = judge_discovered("shell_sweep", result, {}, _sides(), None, [], _runner())
    assert finding.verdict == Verdict.LEAKED
    assert "/var/cache/shared (found by env-npm_config_cache)" in finding.detail
    assert "job A may write: /s/checkouts/job-a (env-PWD), /var/cache/shared (env-npm_config_cache)" in finding.detail


def test_not_found_is_denied_only_when_bs_own_canary_there_was() -> None:
    found = "/var/cache/shared/f-b:BOUNDARY-b0\n"
    assert judge_discovered("shell_sweep", found, {}, _sides(), None, [], _runner()).verdict == Verdict.DENIED
    finding = judge_discovered("shell_sweep", "/x:BOUNDARY-zz\n", {}, _sides(), None, [], _runner())
    assert finding.verdict == Verdict.INCONCLUSIVE and "control failed" in finding.detail


def test_a_place_only_a_has_needs_every_own_canary_found_or_a_refusal() -> None:
    """A's own directory (its job's name in the path) has no counterpart: B's other canaries and its read decide."""
    sides = _sides("/s/data/job-a/cache", how="walk")
    sides.b.places[0].directory = "/s/data/job-b/cache"
    sides.names = ("job-a", "job-b")
    found = "/s/data/job-b/cache/f-b:BOUNDARY-b0\n"
    assert judge_discovered("shell_sweep", found, {}, sides, None, [], _runner()).verdict == Verdict.DENIED
    sides.b.places[0].directory = "/elsewhere"  # no counterpart now
    finding = judge_discovered("shell_sweep", "", {}, sides, None, [], _runner())
    assert finding.verdict == Verdict.INCONCLUSIVE and "job B's own canaries" in finding.detail
    refused = {"discovered-0": "cat: /s/data/job-a/cache/f-a: No such file or directory"}
    finding = judge_discovered("shell_sweep", "", refused, sides, None, [], _runner())
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "OS sandbox")
    finding = judge_discovered("shell_sweep", "", {}, sides, "control failed: shell_sweep", [], _runner())
    assert finding.verdict == Verdict.INCONCLUSIVE


def test_a_search_that_did_not_end_or_missed_its_checkout_proves_nothing() -> None:
    sides = _sides()
    sides.a.ended = False
    assert judge_discovered("shell_sweep", "", {}, sides, None, [], _runner()).verdict == Verdict.INCONCLUSIVE
    sides = _sides()
    sides.a.writable = [("walk", "/elsewhere")]
    finding = judge_discovered("shell_sweep", "/var/cache/shared/f-b:BOUNDARY-b0", {}, sides, None, [], _runner())
    assert finding.verdict == Verdict.INCONCLUSIVE and "did not list its own checkout" in finding.detail


def test_the_host_run_is_never_planted_and_leaves_the_cell_unproven() -> None:
    sides = _sides()
    sides.a.not_planted = ["/run/user/0 (/run is the host's: nothing is planted there)"]
    finding = judge_discovered("shell_sweep", "/var/cache/shared/f-b:BOUNDARY-b0", {}, sides, None, [], _runner())
    assert finding.verdict == Verdict.INCONCLUSIVE and "/run/user/0 (/run is the host's" in finding.detail


def test_the_cell_is_planned_for_each_file_channel() -> None:
    from boundary.scenarios.sweep.scenario import Sweep

    runner = SimpleNamespace(agent=SimpleNamespace(lacks=frozenset(), procfs_blind=frozenset()))
    cells = Sweep().plan(runner)
    assert {c for c in cells if c[0] == DISCOVERED} == {(DISCOVERED, "shell_sweep"), (DISCOVERED, "grep_tool")}


def test_a_back_dated_copy_is_selected_by_its_change_time(tmp_path: Path) -> None:
    """A copy can set its mtime to the past (`touch -d`, `cp -p`); its ctime it cannot."""
    started = int(subprocess.run(["date", "+%s"], capture_output=True, text=True).stdout) - 1
    copy = tmp_path / "copy"
    copy.write_text("BOUNDARY-x\n")
    subprocess.run(["touch", "-d", "@1000", str(copy)], check=True)
    only_mtime = subprocess.run(
        f"find {tmp_path} -type f -newermt @{started}", shell=True, capture_output=True, text=True
    ).stdout
    assert only_mtime == ""
    selected = subprocess.run(
        f"find {tmp_path} -type f {changed_since(started)}", shell=True, capture_output=True, text=True
    ).stdout
    assert selected.split() == [str(copy)]


def test_a_writable_file_gets_a_canary_line_and_clean_cuts_exactly_that_out(tmp_path: Path) -> None:
    """Issue 28, item 4: one file every job may write (one git config for the account, `GIT_CONFIG_GLOBAL`) is a
    place too. Its canary is a line appended to it, the file keeps its inode (a bind stays bound), and cleaning
    leaves it byte for byte as it was, a last line without its newline included."""
    config, bound = tmp_path / "account/gitconfig", tmp_path / "top/bound.conf"
    config.parent.mkdir()
    config.write_text("[user]\n\tname = a")  # no newline at its end
    (tmp_path / "top").mkdir()
    bound.write_text("x = 1\n")
    inode = config.stat().st_ino
    discovery = new_discovery()
    table = f"7 0 0:7 /f {bound} rw - ext4 x rw\n"  # a file bound writable: a mount of its own
    env = {"GIT_CONFIG_GLOBAL": str(config), "HOME": str(tmp_path / "none")}
    _discover(tmp_path, discovery, env, table, read_only=config.parent)
    appended = {p.how: p for p in discovery.planted if p.appended}
    assert appended["env-GIT_CONFIG_GLOBAL"].path == config and appended["mount"].path == bound
    for place in appended.values():
        assert place.wrote and place.path is not None and place.token in place.path.read_text()
        assert place.where == str(place.path)
    assert subprocess.run(["git", "config", "--file", str(config), "user.name"], capture_output=True).stdout == b"a\n"
    clean(discovery.planted, Path("/"))
    assert config.read_text() == "[user]\n\tname = a" and config.stat().st_ino == inode
    assert bound.read_text() == "x = 1\n"


def test_a_canary_line_found_names_the_file() -> None:
    sides = _sides("/srv/account", how="env-GIT_CONFIG_GLOBAL")
    for side in (sides.a, sides.b):
        side.places[0].file, side.places[0].appended = "gitconfig", True
    result = "/srv/account/gitconfig:BOUNDARY-a0\n"
    finding = judge_discovered("shell_sweep", result, {}, sides, None, [], _runner())
    assert finding.verdict == Verdict.LEAKED
    assert "/srv/account/gitconfig (found by env-GIT_CONFIG_GLOBAL)" in finding.detail


def test_a_file_in_a_directory_it_may_write_is_left_to_that_directory(tmp_path: Path) -> None:
    """Under no sandbox every file is writable: `$_` or `$SHELL` names a program, and its directory (a place
    itself) already shares whatever a file in it could. Only a bound file or one in a directory A may not write is
    appended to."""
    program = tmp_path / "bin/tool"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    discovery = new_discovery()
    _discover(tmp_path, discovery, {"TOOL": str(program), "HOME": str(tmp_path / "none")})
    assert program.read_text() == "#!/bin/sh\n"
    assert not [p for p in discovery.planted if p.appended]


def test_only_the_hosts_own_run_is_never_planted_in(tmp_path: Path) -> None:
    """A job's /run on the host's file system is never written; a /run of the sandbox's own (a container's tmpfs,
    another device: here a mount namespace with a tmpfs there) is a place like any other."""
    assert os.stat("/run").st_dev in host_run_devices()  # the host's, and the script never writes there
    own, discovery = tmp_path / "own", new_discovery()
    (own / "checkout").mkdir(parents=True)
    text = "exec 2>&1\n" + discover_lines(discovery, str(own), "/dev/null")
    # Its own /run and /dev/shm, and no HOME: it walks nothing of this host's but what it is given.
    mounts = "mount -t tmpfs own-run /run && mount -t tmpfs own-shm /dev/shm"
    command = ["unshare", "--mount", "bash", "-c", f'{mounts} && exec bash -c "$0"', text]
    env = {"PATH": os.environ["PATH"]}
    said = subprocess.run(command, capture_output=True, text=True, cwd=own / "checkout", env=env).stdout
    read_discovery(discovery, said)
    assert "/run is the host's" not in said
    assert "/run" in [p.directory for p in discovery.planted]
