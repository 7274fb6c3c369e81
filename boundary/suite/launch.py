"""`boundary run`: the live suite started from the command line, where its reports go, and `--layers each` (the run,
then once per claimed layer with every other one off)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from boundary.report.beside import depth_lines
from boundary.report.depth import depth_of
from boundary.report.passrule import Report, run_of
from boundary.report.record import SHARD_ENV, load, shard_place
from boundary.report.renderings import RENDERINGS, show, suite_renderings, write_each
from boundary.report.view import verdict_line
from boundary.suite import pytest_args

REPORTS = Path("reports")
REPORT_NAME = "runner-sandbox"


def run_suite(options: list[str], base: Path | None = None) -> int:
    """The live suite from the package, in this directory: its reports at `base`.* (by default ./reports/, or beside
    the JSON report where `--boundary-report` names it, so that its renderings never disagree with it); `options` go
    to it, but `--shard I/N` (which shard of a CI matrix this run is), which its report records."""
    options, shard = take_option(options, "--shard")
    try:
        env = _shard_environment(shard)
    except ValueError as error:
        print(f"boundary: --shard: {error}", file=sys.stderr)
        return 2
    base = base or report_base(options)
    files = [f"{r.suite_option}={base}.{r.suffix}" for r in suite_renderings().values()]
    defaults = ["-n", "2", *files]
    command = [sys.executable, "-m", "pytest", *pytest_args(Path.cwd()), *defaults, *options]
    return subprocess.run(command, env=env).returncode


BOUNDARY_GROUP = "live sandbox boundary tests:"  # options.add_options' group, as pytest's help heads it
OWN_OPTIONS = """boundary run's own:
  --layers each         then once more per claimed layer with every other one off
  --shard I/N           this run is shard I of a CI matrix's N (its report records it)
"""


def run_help(options: list[str]) -> int:
    """`boundary run --help`: boundary's options first, then pytest's (selection, output, workers) as pytest says
    them; the suite's own options lie in pytest's help, ~180 lines down."""
    command = [sys.executable, "-m", "pytest", *pytest_args(Path.cwd()), *options]
    done = subprocess.run(command, capture_output=True, text=True)
    print(boundary_first(done.stdout) if done.returncode == 0 else done.stdout + done.stderr, end="")
    return done.returncode


def boundary_first(text: str) -> str:
    """pytest's help with boundary's group of options moved to the top, after `usage: boundary run [options]`."""
    lines = text.splitlines(keepends=True)
    start = next((at for at, line in enumerate(lines) if line.strip() == BOUNDARY_GROUP), None)
    if start is None:
        return text
    end = next((at for at in range(start + 1, len(lines)) if lines[at][:1] not in (" ", "\n")), len(lines))
    group, rest = lines[start:end], lines[:start] + lines[end:]
    rest = [line for line in rest if not line.startswith("usage:")]
    head = "usage: boundary run [options] (pytest's options below boundary's)\n\n"
    return head + "".join(group).rstrip() + "\n\n" + OWN_OPTIONS + "\npytest's options:\n" + "".join(rest)


def _shard_environment(shard: str | None) -> dict[str, str] | None:
    """The suite's environment with this run's place in a CI matrix, which its report records (None: as it is)."""
    if shard is None:
        return None
    shard_place(shard)  # ValueError before anything runs
    return {**os.environ, SHARD_ENV: shard}


def report_base(options: list[str]) -> Path:
    """Where a run's reports go, their suffix aside."""
    json_report = _option_value(options, RENDERINGS["json"].suite_option)
    return Path(json_report).with_suffix("") if json_report else REPORTS / REPORT_NAME


def _without_renderings(options: list[str]) -> list[str]:
    """`options` less those that name where a rendering goes (and their values)."""
    named = {r.suite_option for r in suite_renderings().values()}
    kept: list[str] = []
    skip = False
    for word in options:
        if skip:
            skip = False
        elif word in named:
            skip = True
        elif word.split("=", 1)[0] not in named:
            kept.append(word)
    return kept


def _option_value(options: list[str], option: str) -> str | None:
    """The last value given to `option` (as `OPTION VALUE` or `OPTION=VALUE`), as pytest would take it."""
    found = None
    for index, word in enumerate(options):
        if word == option and index + 1 < len(options):
            found = options[index + 1]
        elif word.startswith(f"{option}="):
            found = word.split("=", 1)[1]
    return found


def run_layers_each(options: list[str]) -> int:
    """`--layers each`: the run, then once per layer its runners claim with every other one off (the reports of
    those in ./reports/layer-*.json); the run's reports then also show which layer holds each cell alone. Its exit
    status is the full run's: a layer alone is expected to let through what only another one stops. What it prints
    goes through `show`: a reader that goes away (`| head`) never turns a failed run's status into 0."""
    status, base = run_suite(options), report_base(options)
    full_path = Path(f"{base}.json")
    if not full_path.exists():
        return status
    full = load(full_path)
    claimed = run_of(full).get("denials") or {}
    layers = list(dict.fromkeys(layer for agent in claimed.values() for layer in agent))
    alone: dict[str, Report | str] = {}
    for layer in layers:
        name = f"layer-{re.sub(r'[^a-z0-9]+', '-', layer.lower()).strip('-')}"
        show(
            f"[boundary] --layers each: the run again with {layer} alone ({base.parent / name}.*); what it lets "
            "through fails there as expected, and is reported beside the full run's cells\n"
        )
        code = run_suite([*_without_renderings(options), "--layer-alone", layer], base.parent / name)
        path = base.parent / f"{name}.json"
        alone[layer] = load(path) if path.exists() else f"its run wrote no report (exit {code}): see its output above"
    full["depth"] = depth_of(full, alone)
    renderings = suite_renderings().items()
    write_each(full, {n: Path(_option_value(options, r.suite_option) or f"{base}.{r.suffix}") for n, r in renderings})
    show("\n".join(["", "boundary: each layer alone", *depth_lines(full), f"RESULT: {verdict_line(full)}", ""]))
    return status


def layers_option(options: list[str]) -> tuple[list[str], str | None]:
    """`--layers each` taken out of the suite's options (the suite does not know it)."""
    return take_option(options, "--layers")


def take_option(options: list[str], name: str) -> tuple[list[str], str | None]:
    """The options less the first `name VALUE` (or `name=VALUE`), and its value ("" where none follows; None where
    `name` is not given)."""
    for at, option in enumerate(options):
        if option == name or option.startswith(f"{name}="):
            value = option.partition("=")[2] if "=" in option else (options[at + 1] if at + 1 < len(options) else "")
            rest = options[:at] + options[at + (1 if "=" in option else 2) :]
            return rest, value
    return options, None
