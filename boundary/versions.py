"""The versions a run actually used: agent, sandbox, bwrap, node, kernel."""

from __future__ import annotations

import platform
import subprocess

from boundary import tools
from boundary.runners.contract import Runner


def _command_version(*argv: str) -> str:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else "unavailable"


def collect_versions(runner: Runner) -> dict[str, str]:
    return {
        runner.agent.name: runner.agent.version(),
        runner.sandbox.name: runner.sandbox.version(),
        "bwrap": _command_version("bwrap", "--version"),
        "node": _command_version(str(tools.node()), "--version"),
        "tools": "from PATH" if tools.source() == "path" else "from npm lockfiles",
        "kernel": platform.release(),
    }
