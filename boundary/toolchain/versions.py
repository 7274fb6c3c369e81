"""The versions a run actually used: agent, sandbox, bwrap, node, kernel."""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path
from typing import Protocol

from boundary import proc
from boundary.text import excerpt
from boundary.toolchain import tools

VERSION_TIMEOUT_S = 10.0


class Versioned(Protocol):
    """A runner's agent or sandbox, as far as a report's versions need it (the toolchain sits below both)."""

    @property
    def name(self) -> str: ...

    def version(self) -> str: ...


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


def collect_versions(agent: Versioned, sandbox: Versioned) -> dict[str, str]:
    return {
        "boundary": harness_version(),
        agent.name: agent.version(),
        sandbox.name: sandbox.version(),
        "bwrap": _command_version("bwrap", "--version"),
        "node": _command_version(str(tools.node()), "--version"),
        "tools": "from PATH" if tools.source() == "path" else "from npm lockfiles",
        "kernel": platform.release(),
    }
