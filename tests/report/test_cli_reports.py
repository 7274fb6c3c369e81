"""`boundary run`'s reports go together: named with `--boundary-report`, the HTML and Markdown go beside it (they
never disagree with it); `--layers each` keeps its alone runs off the user's report; and `boundary … | head` ends
quietly when the reader goes, its exit status still the verdict's (a closed pipe never makes a failure a pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from boundary.report.passrule import passed
from boundary.suite import launch
from tests.report.test_render import make_failing, make_report


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    ran: list[list[str]] = []

    def record(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        ran.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(launch.subprocess, "run", record)
    return ran


def _written(command: list[str]) -> dict[str, str]:
    """Option -> the last value it was given, as pytest takes it."""
    pairs = [word.split("=", 1) for word in command if word.startswith("--boundary-") and "=" in word]
    pairs += [[word, command[i + 1]] for i, word in enumerate(command) if word == "--boundary-report"]
    return dict(pairs)


def test_the_renderings_go_beside_a_json_report_named_elsewhere(commands: list[list[str]], tmp_path: Path) -> None:
    assert launch.run_suite(["--boundary-report", str(tmp_path / "nightly.json")]) == 0
    written = _written(commands[0])
    assert written["--boundary-report"] == str(tmp_path / "nightly.json")
    assert written["--boundary-html"] == str(tmp_path / "nightly.html")
    assert written["--boundary-markdown"] == str(tmp_path / "nightly.md")


def test_by_default_every_rendering_is_under_reports(commands: list[list[str]]) -> None:
    launch.run_suite(["--agent", "opencode"])
    assert _written(commands[0])["--boundary-html"] == "reports/runner-sandbox.html"


def test_each_layer_alone_writes_its_own_reports_not_the_users(
    commands: list[list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = tmp_path / "pr.json"
    monkeypatch.setattr(launch, "load", lambda path: {"run": {"denials": {"opencode": {"OS sandbox": ["x"]}}}})
    monkeypatch.setattr(launch, "run_of", lambda report: report["run"])
    monkeypatch.setattr(launch, "write_each", lambda report, paths: None)
    monkeypatch.setattr(launch, "depth_lines", lambda report: [])
    monkeypatch.setattr(launch, "verdict_line", lambda report: "")
    full.write_text("{}")
    launch.run_layers_each([f"--boundary-report={full}"])
    alone = _written(commands[1])
    assert alone["--boundary-report"] == str(tmp_path / "layer-os-sandbox.json"), commands[1]
    assert str(full) not in " ".join(commands[1])


BIG_OUTPUT = """
import argparse, sys
from boundary import cli
def big(args):
    for _ in range(100000):
        print("x" * 100)
    return 0
parser = argparse.ArgumentParser()
parser.set_defaults(func=big)
cli.parser = lambda: parser
sys.exit(cli.main([]))
"""


def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path: Path) -> None:
    script = tmp_path / "big.py"
    script.write_text(BIG_OUTPUT)
    ran = subprocess.run(["bash", "-c", f"{sys.executable} {script} | head -1"], capture_output=True, text=True)
    assert ran.stdout == "x" * 100 + "\n"
    assert "Traceback" not in ran.stderr and "BrokenPipe" not in ran.stderr, ran.stderr


def to_a_reader_gone(argv: list[str]) -> int:
    """`argv`'s exit status, its stdout a pipe whose reader has already gone (`… | head` once head has exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(argv, stdout=write, stderr=subprocess.DEVNULL, timeout=60).returncode
    finally:
        os.close(write)


@pytest.mark.parametrize("make", [make_failing, make_report], ids=["failing", "passing"])
@pytest.mark.parametrize("shown", [[], ["--format", "html"]], ids=["verdict line", "a rendering"])
def test_boundary_reports_exit_status_is_the_verdict_whatever_happens_to_its_reader(
    make: Callable[[], dict[str, object]], shown: list[str], tmp_path: Path
) -> None:
    """`boundary report RUN.json | head` under pipefail: with the reader gone, a failing report still exits 1 and a
    passing one 0: the status is decided before anything is printed, and EPIPE changes only what was seen."""
    report = make()
    (tmp_path / "run.json").write_text(json.dumps(report))
    argv = [sys.executable, "-m", "boundary.cli", "report", str(tmp_path / "run.json"), *shown]
    assert to_a_reader_gone(argv) == (0 if passed(report) else 1)


def test_a_command_cut_off_by_its_reader_before_it_decided_exits_1() -> None:
    """A command still printing when the reader goes has not returned its status: it is never turned into a pass."""
    pipeline = '"$PYTHON" -c "$BIG_OUTPUT" | head -1'  # -c: boundary from this checkout, as `-m boundary.cli`
    env = {**os.environ, "PYTHON": sys.executable, "BIG_OUTPUT": BIG_OUTPUT}
    ran = subprocess.run(["bash", "-o", "pipefail", "-c", pipeline], env=env, capture_output=True, timeout=60)
    assert ran.returncode == 1 and b"Traceback" not in ran.stderr, ran.stderr
