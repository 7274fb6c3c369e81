"""Sabotaged codex runners: each removes one defence, and the harness must report it.

Select one with `--agent codex --runner boundary.sabotage.codex:NAME`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from boundary.agents.codex import toml
from boundary.layout import JobPaths
from boundary.runners.codex import CodexRunner
from boundary.runners.contract import Job


class ReadOnlyNoProfile(CodexRunner):
    """`-s read-only` and no permission profile, as codex's docs suggest for untrusted work: the shell still
    reads everywhere, so job A's transcript is one `cat` away."""

    name = "codex-read-only-no-profile"

    def permissions(self, paths: JobPaths) -> dict[str, str] | None:
        return None

    def extra_flags(self) -> tuple[str, ...]:
        return ("--ignore-user-config", "-s", "read-only")


class WorkspaceWriteNoProfile(ReadOnlyNoProfile):
    """`-s workspace-write`: writes are held to the checkout, reads are not held at all."""

    name = "codex-workspace-write-no-profile"

    def extra_flags(self) -> tuple[str, ...]:
        return ("--ignore-user-config", "-s", "workspace-write")


class TrustsTheProject(CodexRunner):
    """`--trust` and hook trust, hooks on, the checkout's agent files not hidden: the repository's MCP server
    and hooks run unconfined at start (what trusting a project means)."""

    name = "codex-trusts-the-project"
    hidden_paths = ()

    def features_off(self) -> tuple[str, ...]:
        return tuple(f for f in super().features_off() if f != "hooks")

    def extra_flags(self) -> tuple[str, ...]:
        return ("--trust", "--dangerously-bypass-hook-trust")  # trust is checked against the user config


class ViewsAnyImage(ReadOnlyNoProfile):
    """codex's default tools and no permission profile: its `view_image` reads any file, job A's too. It returns
    none of a file as text, only whether it decodes as an image, so no canary comes back: the harness's
    missing-file control must tell A's file (answered as B's own) from one that is not there."""

    name = "codex-views-any-image"

    def tool_settings(self) -> dict[str, Any]:
        return {}

    def expected_tools(self) -> frozenset[str]:
        return self.agent.default_tools


class DeferredFileTool(CodexRunner):
    """codex's tools and its tool search, and a runner's MCP file reader: tool_search holds the reader back,
    unnamed, so the model is sent only the search tool. The runner declares what the model is sent at the top
    (issue 43 item 2): the harness must search for the held-back tools, see the reader, and attack it."""

    name = "codex-deferred-file-tool"

    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        job = super().configure_job(paths, model_url)
        package_root = str(Path(__file__).resolve().parents[2])
        server = {
            "command": sys.executable,
            "args": ["-m", "boundary.sabotage.mcp_files"],
            "env": {"PYTHONPATH": package_root},
            "default_tools_approval_mode": "approve",  # the runner means its tool to be used
        }
        at = job.argv.index("go")  # codex's prompt, last: every setting before it
        job.argv[at:at] = ["-c", f"mcp_servers.files={toml(server)}"]
        return job

    def expected_tools(self) -> frozenset[str]:
        return super().expected_tools() | {"tool_search"}
