"""The reference runner for Claude Code: what a careful runner of Claude Code jobs does.

Claude Code runs its shell in its own sandbox (`sandbox.enabled`, failing if it
cannot start, no unsandboxed escape hatch); its file tools are held by
permission rules, since the sandbox's file rules confine Bash only; settings
come from the runner's file alone (`--setting-sources ""`), hooks are off,
MCP servers are only the runner's (none), and the checkout's agent
configuration is hidden from the agent process at each start.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

from boundary import shared_defaults
from boundary.agents.claude import FORBIDDEN_TOOLS, TOOLS, ClaudeCode
from boundary.layout import JobPaths
from boundary.runners.contract import Job
from boundary.runners.reference import ReferenceRunner


class ClaudeRunner(ReferenceRunner):
    """Claude Code jobs with per-job data dirs, permission deny rules, and Claude Code's own sandbox."""

    agent: ClaudeCode = ClaudeCode()
    default_sandbox: ClassVar[str] = "claude"
    switches: ClassVar[frozenset[str]] = frozenset({"agent permission", "OS sandbox"})

    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        self.agent.config_dir(paths).mkdir(parents=True, exist_ok=True)
        settings = paths.runner_dir / "settings.json"
        settings.write_text(json.dumps(self.settings(paths), indent=2))
        argv = self.launch_argv(paths, [*self.agent.argv(settings, self.tool_names()), *self.extra_flags()])
        return Job(paths.name, paths, argv, self.agent.env(paths, model_url))

    def expected_tools(self) -> frozenset[str]:
        return frozenset(self.tool_names())

    def forbidden_tools(self) -> tuple[str, ...]:
        return FORBIDDEN_TOOLS

    def tool_names(self) -> tuple[str, ...]:
        return TOOLS

    def extra_flags(self) -> list[str]:
        """More flags for `claude`: MCP servers only from `--mcp-config` (none), never the repository's."""
        return ["--strict-mcp-config"]

    def settings(self, paths: JobPaths) -> dict[str, object]:
        policy = self.shell_policy(paths)
        filesystem = {
            "denyRead": [str(p) for p in policy.deny_read],
            "allowRead": [str(p) for p in policy.allow_read],
            "allowWrite": [str(p) for p in policy.allow_write],
            # Its sandbox is srt's, which lets every sandbox write /tmp/claude (and two HOME dirs) once they exist.
            "denyWrite": [*(str(p) for p in policy.deny_write), *shared_defaults.srt_spellings()],
        }
        return self.agent.settings(self.sandbox.name == "claude", filesystem, self.deny_rules(paths))

    def other_checkouts(self, paths: JobPaths) -> list[Path]:
        """Every checkout beside the job's own, as path patterns."""
        return [paths.checkout.parent / name for name in all_but(paths.checkout.name)]

    def deny_rules(self, paths: JobPaths) -> list[str]:
        """The file tools never read or edit the runner's state: accounts, every job's data and runner files,
        and every other job's checkout.

        Outside the working directory print mode refuses ("you haven't granted it yet"), but in a terminal
        that is a question an operator may answer yes (the terminal scenario: job A's checkout leaked), and
        a deny rule is never asked. Deny beats allow, so the rules name every checkout but the job's own.
        Claude Code also hands these rules to its sandbox (a Read rule denies reading, an Edit rule writing),
        so they must not cover the job's own TMPDIR: its shell keeps its working directory there.
        """
        if "agent permission" in self.off:
            return []
        state = self._layout().state
        places = [state / "accounts", state / "runner", paths.checkout.parent / "*.data"]
        places += self.other_checkouts(paths)
        places += self.protected_paths(paths)
        rules = []
        for place in places:
            rules += [f"{tool}(/{path})" for tool in ("Read", "Edit") for path in (place, place / "**")]
        return rules


NAME_CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789_.-"  # a job's name, as Claude Code's rules compare it


def all_but(name: str) -> list[str]:
    """Path patterns that match every directory name except `name`: one that differs at some position, is
    longer, or is a strict prefix of it.

    Claude Code 2.1.332 (seen live) compares rule paths gitignore-style and ignoring case; `[!c]` and `[^c]`
    do not negate there, so "any character but c" is spelled as the class of every other name character.
    """
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"job name {name!r}: only letters, digits, '_', '.' and '-' make a safe pattern")

    def other_than(c: str) -> str:
        return "[" + NAME_CHARACTERS.replace(c.lower(), "") + "]"

    differs = [f"{name[:i]}{other_than(c)}*" for i, c in enumerate(name)]
    return [*differs, f"{name}?*", *(name[:i] for i in range(1, len(name)))]
