"""Sabotaged runners: each removes one defence, and the harness must report it.

Select one with `--runner boundary.sabotage.runners:NAME`. They exist to prove
the harness can fail; a green run against any of them is a harness defect.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from boundary.layout import JobPaths
from boundary.runner import ReferenceRunner


class NoPlugin(ReferenceRunner):
    """No runner plugin: the file tools follow a symlink out of the checkout."""

    name = "no-plugin"

    def plugins(self, paths: JobPaths) -> list[Any]:
        return []


class SharedDataDir(ReferenceRunner):
    """One data directory for every job of the account (incident 1)."""

    name = "shared-data-dir"

    def job_paths(self, name: str) -> JobPaths:
        paths = super().job_paths(name)
        return JobPaths(name, paths.checkout, paths.checkout.parent / "shared.data")


class AllowAllDirectories(ReferenceRunner):
    """Agent permissions that allow every external directory: one layer gone."""

    name = "allow-all-directories"

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        return {"external_directory": "allow"}


class OpencodeMcp(ReferenceRunner):
    """An MCP server named `opencode` offers opencode_session_move & co, and nothing removes them (incident 2)."""

    name = "opencode-mcp"

    def removed_tools(self) -> tuple[str, ...]:
        return ()  # the check still forbids opencode_*, but the runner removes nothing

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        package_root = str(Path(__file__).resolve().parents[2])
        command = [sys.executable, "-m", "boundary.sabotage.mcp_opencode"]
        server = {"type": "local", "command": command, "environment": {"PYTHONPATH": package_root}}
        return {"mcp": {"opencode": server}}


class PhonesHome(ReferenceRunner):
    """Forgets to keep opencode quiet: it tries to fetch its model catalog at start."""

    name = "phones-home"

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        env = super().job_env(paths, shell)
        env.pop("OPENCODE_DISABLE_MODELS_FETCH")
        return env
