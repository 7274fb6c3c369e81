"""The versions a run actually used: agent, sandbox, bwrap, node, kernel."""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from boundary import proc
from boundary.text import excerpt
from boundary.toolchain import tools

if TYPE_CHECKING:  # annotations only: the toolchain sits below the runners
    from boundary.runners.contract import Runner

VERSION_TIMEOUT_S = 10.0


def _command_version(*argv: str) -> str:
    """The first line `argv` prints, or why there is none: a report's versions never stop a run."""
    try:
        done = proc.run(argv, timeout=VERSION_TIMEOUT_S, what=f"`{' '.join(argv)}` to print a version")
    except (OSError, proc.ProcTimeout) as error:
        return f"unavailable ({excerpt(str(error))})"
    said = (done.stdout or done.stderr).strip().splitlines()
    return excerpt(said[0]) if done.returncode == 0 and said else "unavailable"


def harness_version() -> str:
    """boundary's own version, and its commit where it runs from a git checkout: shards of one report must agree."""
    version = metadata.version("boundary")
    source = Path(__file__).resolve().parents[2]
    if not (source / ".git").exists():
        return version
    commit = _command_version("git", "-C", str(source), "rev-parse", "--short=12", "HEAD")
    return version if commit.startswith("unavailable") else f"{version}+g{commit}"


def collect_versions(runner: Runner) -> dict[str, str]:
    return {
        "boundary": harness_version(),
        runner.agent.name: runner.agent.version(),
        runner.sandbox.name: runner.sandbox.version(),
        "bwrap": _command_version("bwrap", "--version"),
        "node": _command_version(str(tools.node()), "--version"),
        "tools": "from PATH" if tools.source() == "path" else "from npm lockfiles",
        "kernel": platform.release(),
    }
