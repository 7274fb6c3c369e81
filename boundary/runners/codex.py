"""The reference runner for codex: what a careful runner of codex jobs does.

codex runs its shell (and checks its apply_patch) under its own bwrap sandbox
with a permission profile: the whole filesystem readable, the runner's state
unreachable but for the job's checkout and TMPDIR (writable). Every setting is
a `-c` override and the user config file is ignored, so nothing in CODEX_HOME
configures the job; the project is never trusted (no `--trust`: no project
config, MCP servers or hooks), and the checkout's agent files (AGENTS.md,
skills, which codex loads even untrusted) are hidden from it at each start.
"""

from __future__ import annotations

from typing import Any, ClassVar

from boundary.agents.codex import Codex
from boundary.layout import JobPaths
from boundary.runners.contract import Job
from boundary.runners.reference import ReferenceRunner

# Tools codex 0.171 offers with the flags below: the shell (exec_command, and write_stdin for a command still
# running) and apply_patch.
TOOLS = frozenset({"apply_patch", "exec_command", "write_stdin"})
FORBIDDEN_TOOLS = ("mcp__*", "*.*", "web_search", "view_image")  # MCP and namespaced tools; web; a 2nd file reader
# Off: web_search (a hosted tool: queries leave the host), view_image (reads files; nothing needs it),
# goals and request_user_input (no user in exec), multi_agent (its tool_search would offer subagents); and
# plugins, hooks and memories: nothing but the runner's flags configures a job, nothing carries across jobs.
FEATURES_OFF = ("plugins", "goals", "view_image", "multi_agent", "hooks", "memories")


class CodexRunner(ReferenceRunner):
    """codex jobs with per-job CODEX_HOME, codex's sandbox and a permission profile, and no project trust."""

    agent: Codex = Codex()
    default_sandbox: ClassVar[str] = "codex"

    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        self.hold_places(paths)
        home = self.agent.config_dir(paths)
        home.mkdir(parents=True, exist_ok=True)
        if home.is_relative_to(paths.tmp):  # codex then refuses to link its sandbox helper, and no command runs
            raise RuntimeError(f"job {paths.name}: CODEX_HOME {home} is inside its TMPDIR {paths.tmp}")
        config = self.agent.config(model_url, self.permissions(paths)) | self.tool_settings()
        argv = self.launch_argv(paths, self.agent.argv(config, self.extra_flags()))
        return Job(paths.name, paths, argv, self.agent.env(paths))

    def tool_settings(self) -> dict[str, Any]:
        """What turns codex's tools beyond TOOLS off (its features, the hosted web search, asking the user)."""
        return {
            "features": dict.fromkeys(self.features_off(), False),
            "web_search": "disabled",
            "tools": {"experimental_request_user_input": {"enabled": False}},
        }

    def expected_tools(self) -> frozenset[str]:
        return TOOLS

    def forbidden_tools(self) -> tuple[str, ...]:
        return FORBIDDEN_TOOLS

    def hold_places(self, paths: JobPaths) -> None:
        """Each protected path the checkout lacks becomes an empty directory (git ignores it): codex's bwrap
        otherwise makes an empty file there to mount over, and at times leaves it (an empty AGENTS.override.md
        would replace the repository's instructions); and no job can create a file in its place."""
        for path in self.protected_paths(paths):
            if not path.exists() and not path.is_symlink():
                path.mkdir(parents=True)

    def features_off(self) -> tuple[str, ...]:
        return FEATURES_OFF

    def sandboxed(self) -> bool:
        return self.sandbox.name == "codex"

    def extra_flags(self) -> tuple[str, ...]:
        """More flags for `codex exec`: no user config file or rules (every setting is the runner's `-c`); with its
        sandbox off (a control), the flag that runs everything unconfined."""
        ignore = ("--ignore-user-config", "--ignore-rules")
        return ignore if self.sandboxed() else (*ignore, "--dangerously-bypass-approvals-and-sandbox")

    def permissions(self, paths: JobPaths) -> dict[str, str] | None:
        """The profile (None: none, with codex's sandbox off): all readable, the runner's state `none` but the
        job's checkout and TMPDIR (`write`).

        Only a `write` entry re-opens a path inside a `none` one (a nested `read` is ignored), and bwrap must
        execute codex's sandbox helper from CODEX_HOME: so CODEX_HOME/tmp is writable and its helper directory
        read-only again (a `read` inside a `write` entry holds). The rest of CODEX_HOME stays unreachable.
        """
        if not self.sandboxed():
            return None
        policy = self.shell_policy(paths)
        profile = {":root": "read", **{str(p): "none" for p in policy.deny_read}}
        profile |= {str(p): "write" for p in policy.allow_write}
        profile[str(self.agent.helper_dir(paths).parent)] = "write"
        profile[str(self.agent.helper_dir(paths))] = "read"
        return profile | {str(p): "read" for p in policy.deny_write}
