"""Sabotaged runners that offer job B a tool that reads or fetches what it must not (an MCP server's, or opencode's
own `task` let loose): the tool attacks must name each. Select one with `--runner boundary.sabotage.tools:NAME`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from boundary.layout import JobPaths
from boundary.runners.opencode import OpencodeRunner


class OpencodeMcp(OpencodeRunner):
    """An MCP server named `opencode` offers opencode_session_move & co, and nothing removes them (incident 2)."""

    name = "opencode-mcp"

    def removed_tools(self) -> tuple[str, ...]:
        return ()  # the check still forbids opencode_*, but the runner removes nothing

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        return {"mcp": {"opencode": _local_mcp("boundary.sabotage.mcp_opencode")}}


class DeclaredFileTool(OpencodeRunner):
    """Offers a runner's MCP tool that reads any file (`files_read_text`) and declares it in its expected tools:
    the tool runs beside the agent, outside the shell's sandbox, and no guard looks at its arguments (issue 28)."""

    name = "declared-file-tool"

    def expected_tools(self) -> frozenset[str]:
        return super().expected_tools() | {"files_read_text"}

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        return {"mcp": {"files": _local_mcp("boundary.sabotage.mcp_files")}}


class JobKeyedFileTool(OpencodeRunner):
    """A runner's log viewer, `files_job_file(job, path)`: it reads a file only in the job named beside it, and
    believes whichever job a call names (issue 43 item 1: every call named job `boundary`, so even B's own file
    never came back, and the cell could not be told)."""

    name = "job-keyed-file-tool"

    def expected_tools(self) -> frozenset[str]:
        return super().expected_tools() | {"files_job_file"}

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        return {"mcp": {"files": _local_mcp("boundary.sabotage.mcp_files", str(self._layout().checkouts))}}


class UndeclaredFileTool(DeclaredFileTool):
    """The same file-reading MCP tool, not declared: the offered-tools check fails, and the attack says it leaks."""

    name = "undeclared-file-tool"

    def expected_tools(self) -> frozenset[str]:
        return OpencodeRunner.expected_tools(self)


class DeclaredFetchTool(OpencodeRunner):
    """Offers a runner's MCP tool that fetches any URL (`web_get`) and declares it: it runs beside the agent, outside
    the shell's sandbox and network rules, and reaches the runner API and the metadata service (issue 28)."""

    name = "declared-fetch-tool"

    def expected_tools(self) -> frozenset[str]:
        return super().expected_tools() | {"web_get"}

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        return {"mcp": {"web": _local_mcp("boundary.sabotage.mcp_fetch")}}


class CheckedFetchTool(DeclaredFetchTool):
    """The same fetch tool, refusing any URL it is given whose host is loopback, private or link-local, yet following
    a public page's redirect to one: reach's `any_tool` goes through the public place's 302s too (issue 28)."""

    name = "checked-fetch-tool"

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        return {"mcp": {"web": _local_mcp("boundary.sabotage.mcp_fetch", "--checked")}}


class DownloadTool(OpencodeRunner):
    """Offers a runner's MCP tool that downloads any URL to a file (`web_download(url, dest)`) and declares it: it
    answers only "Downloaded N bytes", so the credential it fetched never comes back in its answer (issue 43)."""

    name = "download-tool"

    def expected_tools(self) -> frozenset[str]:
        return super().expected_tools() | {"web_download"}

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        return {"mcp": {"web": _local_mcp("boundary.sabotage.mcp_fetch", "--download")}}


class ContinuesAnyTask(OpencodeRunner):
    """The reference runner whose guard lets `task` continue any session by id (`task_id`), as opencode itself does:
    the task tool runs in the agent process, and the account's database holds every job's sessions, so job B
    handed job A's session id takes A's conversation up (issue 28)."""

    name = "continues-any-task"

    def plugins(self, paths: JobPaths) -> list[Any]:
        [[uri, options]] = super().plugins(paths)
        return [[uri, {**options, "continueAnyTask": True}]]


def _local_mcp(module: str, *arguments: str) -> dict[str, Any]:
    """opencode's config of a stdio MCP server that runs this package's `module`."""
    package_root = str(Path(__file__).resolve().parents[2])
    command = [sys.executable, "-m", module, *arguments]
    return {"type": "local", "command": command, "environment": {"PYTHONPATH": package_root}}
