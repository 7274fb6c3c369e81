"""Reference runners that start their agent with its default tools, for the live test of `boundary:agent-default`."""

from __future__ import annotations

from typing import Any

from boundary.runners.claude import ClaudeRunner
from boundary.runners.codex import CodexRunner
from boundary.runners.opencode import OpencodeRunner


class OpencodeDefaultTools(OpencodeRunner):
    """No `tools` config and no deny rule for a tool: opencode offers all it has by default."""

    name = "opencode-default-tools"

    def removed_tools(self) -> tuple[str, ...]:
        return ()

    def expected_tools(self) -> frozenset[str]:
        return self.agent.default_tools

    def forbidden_tools(self) -> tuple[str, ...]:
        return ()


class ClaudeDefaultTools(ClaudeRunner):
    """`--tools default`: what `claude -p` offers without the flag."""

    name = "claude-default-tools"

    def tool_names(self) -> tuple[str, ...]:
        return ("default",)

    def expected_tools(self) -> frozenset[str]:
        return self.agent.default_tools


class CodexDefaultTools(CodexRunner):
    """No `features`, `web_search` or `tools` config."""

    name = "codex-default-tools"

    def tool_settings(self) -> dict[str, Any]:
        return {}

    def expected_tools(self) -> frozenset[str]:
        return self.agent.default_tools

    def forbidden_tools(self) -> tuple[str, ...]:
        return ()
