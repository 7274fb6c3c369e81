"""Reference runners that start their agent with its default tools, for the live test of `boundary:agent-default`."""

from __future__ import annotations

from boundary.layout import JobPaths
from boundary.runners.claude import ClaudeRunner
from boundary.runners.codex import CodexRunner
from boundary.runners.contract import Job
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

    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        self.hold_places(paths)
        self.agent.config_dir(paths).mkdir(parents=True, exist_ok=True)
        config = self.agent.config(model_url, self.permissions(paths))
        argv = self.launch_argv(paths, self.agent.argv(config, self.extra_flags()))
        return Job(paths.name, paths, argv, self.agent.env(paths))

    def expected_tools(self) -> frozenset[str]:
        return self.agent.default_tools

    def forbidden_tools(self) -> tuple[str, ...]:
        return ()
