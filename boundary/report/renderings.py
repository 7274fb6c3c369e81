"""The registry of renderings: name → how to render a report dict, and the options that write it.

`boundary report` gets `--NAME OUT` and `--format NAME` for each entry (boundary/cli.py); the live suite gets
each entry's `suite_option` (boundary/suite/options.py) and `boundary run` writes those into ./reports/.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from boundary.report.html import to_html
from boundary.report.markdown import to_markdown
from boundary.report.passrule import Report
from boundary.report.record import to_json, write
from boundary.report.terminal import to_text


@dataclass(frozen=True)
class Rendering:
    """One way to show a report: `boundary report --NAME OUT` writes it, `--format NAME` prints it."""

    render: Callable[[Report], str]
    suffix: str  # its file's ending, without the dot
    what: str  # what it is, for the options' help: "write {what} to OUT" (`boundary report`), "… here" (the suite)
    suite_option: str = ""  # the live suite's option that writes it to a file ("": the suite does not)


RENDERINGS: dict[str, Rendering] = {
    "json": Rendering(to_json, "json", "the run's JSON report (with its verdict)", "--boundary-report"),
    "html": Rendering(to_html, "html", "the report as one self-contained HTML page", "--boundary-html"),
    "markdown": Rendering(
        to_markdown, "md", "the report as markdown (for $GITHUB_STEP_SUMMARY)", "--boundary-markdown"
    ),
    "terminal": Rendering(to_text, "txt", "the report as the live suite prints it at the end"),
}


def suite_renderings() -> dict[str, Rendering]:
    """The renderings the live suite can write, by name."""
    return {name: rendering for name, rendering in RENDERINGS.items() if rendering.suite_option}


def write_each(report: Report, paths: Mapping[str, Path | None]) -> None:
    """Each named rendering of `report`, written to its path (None: not asked for)."""
    for name, path in paths.items():
        if path is not None:
            write(path, RENDERINGS[name].render(report))


def show(text: str) -> None:
    """`text` on stdout. A reader that has gone (`boundary report … | head`, a closed pipe: EPIPE) loses the rest of
    it, and nothing else changes: the caller's exit status stays the verdict it decided before showing anything."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()  # now, not at exit: there a failed flush would make the exit status 120, whatever it was
    except BrokenPipeError:
        stdout_to_nowhere()


def stdout_to_nowhere() -> None:
    """stdout onto /dev/null once its reader has gone: what is still buffered, and Python's flush at exit, go nowhere
    instead of failing again."""
    nowhere = os.open(os.devnull, os.O_WRONLY)
    os.dup2(nowhere, sys.stdout.fileno())
    os.close(nowhere)
