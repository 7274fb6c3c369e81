"""Sabotaged Claude Code runners: each removes one defence, and the harness must report it.

Select one with `--agent claude --runner boundary.sabotage.claude:NAME`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

from boundary import shared_defaults
from boundary.layout import JobPaths
from boundary.runners.claude import ClaudeRunner
from boundary.runners.contract import Job


class SandboxOnly(ClaudeRunner):
    """Only the sandbox's file rules, and permissions skipped (as many CI runners do): the sandbox confines
    Bash, not the Read, Grep and Glob tools, which run in the unconfined agent process."""

    name = "claude-sandbox-only"

    def deny_rules(self, paths: JobPaths) -> list[str]:
        return []

    def extra_flags(self) -> list[str]:
        return [*super().extra_flags(), "--dangerously-skip-permissions"]


class NothingHolds(SandboxOnly):
    """Permissions skipped and the sandbox off: every channel reaches job A."""

    name = "claude-nothing-holds"

    def __init__(self, sandbox: str = "passthrough") -> None:
        super().__init__(sandbox=sandbox)


class LoadsProjectSettings(ClaudeRunner):
    """Project settings and MCP servers on (`--setting-sources user,project,local`, no `--strict-mcp-config`),
    the checkout's agent files neither hidden nor protected: a repository's hooks and MCP servers run unconfined
    (CVE-2025-59536), and a job's edits to its instructions stick."""

    name = "claude-loads-project-settings"
    hidden_paths = ()

    def protected_paths(self, paths: JobPaths) -> list[Path]:
        return []

    def settings(self, paths: JobPaths) -> dict[str, object]:
        return {**super().settings(paths), "disableAllHooks": False}

    def extra_flags(self) -> list[str]:
        return ["--setting-sources", "user,project,local"]


class TrustsPrintMode(ClaudeRunner):
    """No deny rule for other jobs' checkouts: print mode refuses them anyway ("you haven't granted it yet"),
    so cross_job passes; in a terminal that refusal is a question, and an operator's yes reads job A's files."""

    name = "claude-trusts-print-mode"

    def other_checkouts(self, paths: JobPaths) -> list[Path]:
        return []


class KeepsSandboxDefaults(ClaudeRunner):
    """Its sandbox's write defaults kept: /tmp/claude is writable from every job's shell once it exists (the harness
    makes it), so what job A leaves there, job B reads."""

    name = "claude-keeps-sandbox-defaults"

    def settings(self, paths: JobPaths) -> dict[str, object]:
        settings = super().settings(paths)
        filesystem = cast(dict[str, Any], settings["sandbox"])["filesystem"]
        filesystem["denyWrite"] = [p for p in filesystem["denyWrite"] if p not in shared_defaults.srt_spellings()]
        return settings


class DeferredFileTool(ClaudeRunner):
    """Claude Code's tools and ToolSearch, tool search on as it comes, and a runner's MCP file reader allowed: the
    reader is deferred behind ToolSearch, so the model is sent only its name, and it reads any path from beside
    the agent. The runner declares the tools the model is sent whole (issue 43 item 2): the harness must load the
    deferred tools, see the reader among the offered tools, and attack it."""

    name = "claude-deferred-file-tool"

    def tool_names(self) -> tuple[str, ...]:
        return (*super().tool_names(), "ToolSearch")

    def expected_tools(self) -> frozenset[str]:
        return frozenset({*self.tool_names(), "DeferredToolPlaceholder"})

    def extra_flags(self) -> list[str]:
        package_root = str(Path(__file__).resolve().parents[2])
        server = {
            "command": sys.executable,
            "args": ["-m", "boundary.sabotage.mcp_files"],
            "env": {"PYTHONPATH": package_root},
        }
        return [*super().extra_flags(), "--mcp-config", json.dumps({"mcpServers": {"files": server}})]

    def settings(self, paths: JobPaths) -> dict[str, object]:
        settings = super().settings(paths)
        cast(dict[str, Any], settings["permissions"])["allow"] = ["mcp__files"]
        return settings

    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        job = super().configure_job(paths, model_url)
        job.env.pop("ENABLE_TOOL_SEARCH", None)
        return job
