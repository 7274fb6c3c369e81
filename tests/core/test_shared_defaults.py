"""What a sandbox's defaults share between jobs: the harness makes it before the jobs run, the reference runners
keep each job's shell out of it, and the sweep looks for it where the job's shell says it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from boundary import shared_defaults
from boundary.sabotage.runners import KeepsSrtTmpdir, SrtAsItComes
from boundary.sandboxes import ShellPolicy, Srt
from boundary.scenarios.sweep.judge import file_place
from boundary.scenarios.sweep.places import SAID, SHELL_PLACES, Place, holds, plant_line, resolve
from boundary.toolchain import tools
from boundary.verdict import Verdict

HOST_WIDE = shared_defaults.on_every_host()


def _root(tmp_path: Path) -> Path:
    """A host's `/` with a /tmp as a host has it (open to all, sticky)."""
    root = tmp_path / "root"
    (root / "tmp").mkdir(parents=True)
    (root / "tmp").chmod(0o1777)
    return root


def test_the_pinned_sandboxes_shared_defaults_are_known() -> None:
    """Read from srt 0.0.83's sandbox-utils.js: its TMPDIR default and its own write paths."""
    assert [d.where for d in shared_defaults.SHARED_DEFAULTS] == [
        "/tmp/claude",
        "$HOME/.npm/_logs",
        "$HOME/.claude/debug",
    ]
    assert [(Path("/tmp"), "claude")] == HOST_WIDE
    assert shared_defaults.in_home(Path("/h")) == [(Path("/h"), ".npm/_logs"), (Path("/h"), ".claude/debug")]


def test_a_missing_directory_is_made_like_its_parent_and_removed_after(tmp_path: Path) -> None:
    root = _root(tmp_path)
    with shared_defaults.present(root, HOST_WIDE) as made:
        assert made == [Path("/tmp/claude")]
        assert (root / "tmp/claude").stat().st_mode & 0o7777 == 0o1777  # as /tmp: any job's user may write it
    assert not (root / "tmp/claude").exists()


def test_a_directory_the_harness_did_not_make_stays(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "tmp/claude").mkdir()
    (root / "tmp/claude/theirs").write_text("x")
    with shared_defaults.present(root, HOST_WIDE) as made:
        assert made == []
    assert (root / "tmp/claude/theirs").read_text() == "x"


def test_it_goes_only_when_the_last_unit_on_the_host_lets_go(tmp_path: Path) -> None:
    """Units in parallel on one host share its /tmp: the first to finish must not take it from the other."""
    root = _root(tmp_path)
    with shared_defaults.present(root, HOST_WIDE) as first:
        with shared_defaults.present(root, HOST_WIDE) as second:
            assert (first, second) == ([Path("/tmp/claude")], [])
        assert (root / "tmp/claude").is_dir()
        with shared_defaults.present(root, HOST_WIDE):
            pass
        assert (root / "tmp/claude").is_dir()
    assert not (root / "tmp/claude").exists()


def test_what_a_killed_run_made_is_removed_by_the_next(tmp_path: Path) -> None:
    """Its hold died with it; its record of what it made did not."""
    root = _root(tmp_path)
    killed = (
        "import os, sys; from pathlib import Path; from boundary import shared_defaults as s; "
        "held = s.present(Path(sys.argv[1]), s.on_every_host()); held.__enter__(); os.kill(os.getpid(), 9)"
    )
    subprocess.run([sys.executable, "-c", killed, str(root)], check=False)
    assert (root / "tmp/claude").is_dir()
    with shared_defaults.present(root, HOST_WIDE) as made:
        assert made == []  # there already
    assert not (root / "tmp/claude").exists()


def test_home_defaults_are_made_only_in_a_home_that_exists(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "home/job").mkdir(parents=True)
    wanted = [*shared_defaults.in_home(Path("/home/job")), *shared_defaults.in_home(Path("/home/none"))]
    with shared_defaults.present(root, wanted) as made:
        assert made == [Path("/home/job/.npm/_logs"), Path("/home/job/.claude/debug")]
        assert not (root / "home/none").exists()
    assert sorted(p.name for p in (root / "home/job").iterdir()) == []  # .npm and .claude went too


def _wrapper(tmp_path: Path, sandbox: Srt, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sandbox's wrapper, with a stand-in srt that prints what it was handed."""
    fake = tmp_path / "srt"
    fake.write_text('#!/bin/sh\necho "CLAUDE_CODE_TMPDIR=${CLAUDE_CODE_TMPDIR-unset} $*"\n')
    monkeypatch.setattr(tools, "node", lambda: Path("/bin/sh"))
    monkeypatch.setattr(tools, "executable", lambda name: fake)
    wrapper = tmp_path / "shell"
    wrapper.write_text(sandbox.wrapper(ShellPolicy([], [], [tmp_path]), tmp_path))
    wrapper.chmod(0o755)
    return wrapper


def test_srt_gives_the_shell_the_jobs_own_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """srt sets the shell's TMPDIR to /tmp/claude unless CLAUDE_CODE_TMPDIR names another."""
    wrapper = _wrapper(tmp_path, Srt(), monkeypatch)
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp_path / "tmp")}
    ran = subprocess.run([str(wrapper), "-c", "true"], capture_output=True, text=True, env=env)
    assert ran.stdout.split()[0] == f"CLAUDE_CODE_TMPDIR={tmp_path / 'tmp'}", ran


def test_srt_without_a_tmpdir_does_not_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = _wrapper(tmp_path, Srt(), monkeypatch)
    ran = subprocess.run([str(wrapper), "-c", "true"], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode == 126 and "no TMPDIR" in ran.stderr and ran.stdout == ""


def test_srt_denies_writing_its_shared_defaults() -> None:
    filesystem = Srt().settings(ShellPolicy([], [], [Path("/w")], deny_write=[Path("/w/.git")]))["filesystem"]
    assert filesystem["denyWrite"] == ["/w/.git", "/tmp/claude", "~/.npm/_logs", "~/.claude/debug"]  # type: ignore[index]


def test_the_control_keeps_srt_as_it_comes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrapper = _wrapper(tmp_path, SrtAsItComes(), monkeypatch)
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp_path / "tmp")}
    ran = subprocess.run([str(wrapper), "-c", "true"], capture_output=True, text=True, env=env)
    assert ran.stdout.split()[0] == "CLAUDE_CODE_TMPDIR=unset"
    assert SrtAsItComes().settings(ShellPolicy([], [], []))["filesystem"]["denyWrite"] == []  # type: ignore[index]
    assert isinstance(KeepsSrtTmpdir().sandbox, SrtAsItComes)
    assert KeepsSrtTmpdir("passthrough").sandbox.name == "passthrough"


def _plant(place: Place, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", plant_line(place)], capture_output=True, text=True, env=env, cwd=cwd)
    return done.stdout


def test_a_place_is_where_the_shell_says_it_is(tmp_path: Path) -> None:
    """The sweep plants in the TMPDIR the job's shell sees, which a sandbox may have changed, and hears where."""
    shell_tmp = tmp_path / "shell-tmp"
    shell_tmp.mkdir()
    place = Place("tmpdir", "boundary-sweep-x", "BOUNDARY-token")
    said = _plant(place, {"TMPDIR": str(shell_tmp)}, tmp_path)
    assert said == f"{SAID} tmpdir {shell_tmp}\n"
    resolve([place], said)
    assert place.path == shell_tmp / "boundary-sweep-x"
    assert holds(place, Path("/"))


def test_a_place_the_shell_names_no_directory_for_is_left_alone(tmp_path: Path) -> None:
    """No HOME: nothing is written at `/.npm/_logs`; the place is DENIED as having nothing to find."""
    place = Place("npm_logs", "boundary-sweep-x", "BOUNDARY-token")
    said = _plant(place, {}, tmp_path)
    assert said == f"{SAID} npm_logs -\n"
    resolve([place], said)
    assert place.path is None
    finding = file_place(place, "shell_sweep", "", None, [], None)  # type: ignore[arg-type]
    assert finding.verdict == Verdict.DENIED


def test_a_place_the_shell_never_named_is_inconclusive() -> None:
    place = Place("tmp_claude", "boundary-sweep-x", "BOUNDARY-token")
    resolve([place], "")
    finding = file_place(place, "shell_sweep", "", None, [], None)  # type: ignore[arg-type]
    assert finding.verdict == Verdict.INCONCLUSIVE and "never said" in finding.detail


def test_every_shared_default_is_a_sweep_place() -> None:
    assert {d.place: d.where for d in shared_defaults.SHARED_DEFAULTS}.items() <= SHELL_PLACES.items()


def test_a_canary_is_read_in_the_host_the_jobs_run_on(tmp_path: Path) -> None:
    """In a container host, /tmp is the container's: read through the host's root, not the harness's /."""
    root = _root(tmp_path)
    (root / "tmp/claude").mkdir()
    (root / "tmp/claude/f").write_text("BOUNDARY-token\n")
    place = Place("tmp_claude", "f", "BOUNDARY-token", directory="/tmp/claude")
    assert holds(place, root) and not holds(place, Path("/"))
