"""The terminal scenario's pure parts: the interactive argv, reading Claude Code's screen, the checkout patterns."""

from __future__ import annotations

import fnmatch

import pyte
import pytest

from boundary.runners.claude import all_but
from boundary.scenarios.terminal.scenario import COLUMNS, ROWS, _prompt, _selected, interactive_argv


def test_interactive_argv_drops_print_mode_only() -> None:
    argv = ["launch", "claude", "-p", "go", "--output-format", "json", "--tools", "Read", "--setting-sources", ""]
    assert interactive_argv(argv) == ["launch", "claude", "--tools", "Read", "--setting-sources", ""]
    with pytest.raises(ValueError, match="expected `-p go`"):
        interactive_argv(["claude", "-p", "hello", "--output-format", "json"])


def _screen(*rows: str) -> list[str]:
    screen = pyte.Screen(COLUMNS, ROWS)
    # The TUI moves the cursor between words instead of writing spaces (seen live).
    pyte.ByteStream(screen).feed("\r\n".join(rows).replace(" ", "\x1b[C").encode())
    return [line.rstrip() for line in screen.display]


def test_a_permission_prompt_is_read_off_the_screen() -> None:
    lines = _screen(
        "─" * 40, " Read file", "╌" * 40, " Read(/state/checkouts/job-a/notes.txt)", "╌" * 40,
        " Do you want to proceed?", " ❯ 1. Yes", "   2. Yes, allow reading from /state/checkouts/job-a", "   3. No",
    )  # fmt: skip
    assert _prompt(lines) == "Read file Read(/state/checkouts/job-a/notes.txt)"
    assert _selected(lines, "1. Yes") and not _selected(lines, "3. No")
    assert _prompt(_screen("❯ go", "  ⏵⏵ accept edits on (shift+tab to cycle)")) is None


@pytest.mark.parametrize("own", ["job-b", "a", "writer_2.x"])
def test_all_but_matches_every_other_checkout_and_never_the_own(own: str) -> None:
    patterns = all_but(own)

    def denied(name: str) -> bool:  # Claude Code compares ignoring case
        return any(fnmatch.fnmatch(name.lower(), p.lower()) for p in patterns)

    assert not denied(own)
    others = ["job-a", "job-bb", "job-", "jo", "x", f"{own}.data", own[:-1] or "z", own + "x", "JOB-A"]
    assert all(denied(name) for name in others if name.lower() != own.lower())
    with pytest.raises(ValueError):
        all_but("job b")
