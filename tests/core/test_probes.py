"""Targets, channels and probes: what counts as a leak, what each channel names."""

from __future__ import annotations

import subprocess
from pathlib import Path

from boundary import canary
from boundary.agents.opencode import OpenCode
from boundary.probes import CHANNELS, Target, control_problem, make_probe, matrix_for, targets_for

MATRIX, TARGETS = matrix_for(OpenCode()), targets_for(OpenCode())

BY_NAME = {channel.name: channel for channel in CHANNELS}


def target(tmp_path: Path, named: bool = True) -> Target:
    name = canary.new_canary() if named else None
    path = tmp_path / f"tool_{name}"
    content = canary.new_canary()
    path.write_text(content)
    return Target("planted", path, content, name)


def test_canaries_are_fresh_and_match_the_grep_pattern() -> None:
    import re

    tokens = {canary.new_canary() for _ in range(100)}
    assert len(tokens) == 100
    assert all(re.fullmatch(canary.PATTERN, token) for token in tokens)


def test_a_canary_the_probe_supplied_is_not_a_leak(tmp_path: Path) -> None:
    """A denial that echoes the path the probe named must not count as the file name leaking."""
    t = target(tmp_path)
    probe = make_probe(OpenCode(), BY_NAME["read"], t, t.path, "p")
    assert probe.leaked(f"denied: {t.path}") == []
    assert probe.leaked(f"1: {t.content}") == [t.content]


def test_listing_channel_names_the_directory_and_catches_the_name(tmp_path: Path) -> None:
    t = target(tmp_path)
    probe = make_probe(OpenCode(), BY_NAME["shell_ls"], t, t.path, "p")
    assert probe.path == tmp_path
    assert probe.leaked(f"-rw-r--r-- 1 root root 30 {t.path.name}") == [t.name_token]


def test_symlink_target_counts_as_supplied(tmp_path: Path) -> None:
    """The guard may echo the resolved path of a link the probe itself followed."""
    t = target(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(t.path)
    probe = make_probe(OpenCode(), BY_NAME["read_symlink"], t, link, "p")
    assert probe.leaked(f"guard: {link} resolves to {t.path}") == []


def test_computed_path_is_not_in_the_command_but_resolves_at_run_time(tmp_path: Path) -> None:
    """Only the OS sandbox can stop it: the command never names the path literally."""
    t = target(tmp_path)
    call = make_probe(OpenCode(), BY_NAME["shell_cat_computed"], t, t.path, "p").call
    assert str(t.path) not in call.args["command"]
    output = subprocess.run(["bash", "-c", call.args["command"]], capture_output=True, text=True).stdout
    assert output == t.content + "\n"


def test_shell_cat_finds_a_canary_deep_in_a_binary_file(tmp_path: Path) -> None:
    """The account database is binary and large: only canary-shaped strings come back, so the reply holds it."""
    t = target(tmp_path)
    t.path.write_bytes(b"\0\xff" * 300_000 + t.content.encode() + b"\0" * 1000)
    call = make_probe(OpenCode(), BY_NAME["shell_cat"], t, t.path, "p").call
    output = subprocess.run(["bash", "-c", call.args["command"]], capture_output=True, text=True).stdout
    assert output == t.content + "\n"


def test_shell_cat_returns_each_canary_once(tmp_path: Path) -> None:
    """A saved output of thousands of canary lines comes back as one line: no agent's output limit cuts a batch."""
    t = target(tmp_path)
    t.path.write_text(f"{t.content}\n" * 5000)
    for channel in ("shell_cat", "shell_cat_computed"):
        call = make_probe(OpenCode(), BY_NAME[channel], t, t.path, "p").call
        output = subprocess.run(["bash", "-c", call.args["command"]], capture_output=True, text=True).stdout
        assert output == t.content + "\n"


def test_control_must_return_the_own_canary(tmp_path: Path) -> None:
    own = target(tmp_path)
    read = make_probe(OpenCode(), BY_NAME["read"], own, own.path, "control")
    assert control_problem(read, f"1: {own.content}") is None
    assert "did not return its canary" in (control_problem(read, "File not found") or "")
    assert "never ran" in (control_problem(read, None) or "")
    listing = make_probe(OpenCode(), BY_NAME["glob"], own, own.path, "control")
    assert control_problem(listing, str(own.path)) is None


def test_presence_is_checked_from_outside(tmp_path: Path) -> None:
    t = target(tmp_path)
    assert t.presence() is None
    t.path.write_text("overwritten")
    assert "no longer holds its canary" in (t.presence() or "")
    t.path.unlink()
    assert "was not there" in (t.presence() or "")


def test_matrix_covers_every_target_and_skips_only_listings_of_unnamed_targets() -> None:
    assert {t for t, _ in MATRIX} == set(TARGETS)
    unnamed = [t for t, named in TARGETS.items() if not named]
    for name in unnamed:
        assert {c for t, c in MATRIX if t == name} == {c.name for c in CHANNELS if not c.listing}
    content_channels = sum(1 for c in CHANNELS if not c.listing)
    assert len(MATRIX) == sum(len(CHANNELS) if named else content_channels for named in TARGETS.values())


def test_a_listing_reveals_a_name_the_directory_it_named_also_holds(tmp_path: Path) -> None:
    """Claude Code keeps a tool result at <project>/<session>/tool-results/<session>.txt: the directory a listing
    names holds the secret token too. An echo of that directory is no leak; the file's name in the listing is."""
    from boundary.agents.claude import ClaudeCode

    name = canary.new_canary()
    path = tmp_path / name / "tool-results" / f"{name}.txt"
    path.parent.mkdir(parents=True)
    t = Target("planted_tool_result", path, canary.new_canary(), name)
    t.path.write_text(t.content)
    for channel in ("shell_ls", "glob"):
        probe = make_probe(ClaudeCode(), BY_NAME[channel], t, t.path, "p")
        assert probe.path == path.parent
        assert probe.leaked(f"ls: cannot open directory '{path.parent}': Permission denied") == []
        assert probe.leaked(f"Permission to read {path.parent} has been denied.") == []
        assert probe.leaked(f"-rw-r--r-- 1 root root 30 {path.name}") == [name], channel
        assert probe.leaked(str(path)) == [name], channel  # a glob lists the full path: the directory, then the file


def test_a_content_channel_never_counts_the_name_it_typed(tmp_path: Path) -> None:
    """A read names the file itself: its name in any form the answer echoes is not a leak (its content is)."""
    t = target(tmp_path)
    relative = Path("..") / tmp_path.name / t.path.name
    probe = make_probe(OpenCode(), BY_NAME["read_relative"], t, relative, "p")
    assert probe.leaked(f"File not found: {t.path}") == []
    assert probe.leaked(f"denied: ~/{t.path.name}") == []
    assert probe.leaked(t.content) == [t.content]
