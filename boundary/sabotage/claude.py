"""Sabotaged Claude Code runners: each removes one defence, and the harness must report it.

Select one with `--agent claude --runner boundary.sabotage.claude:NAME`.
"""

from __future__ import annotations

from boundary.claude_runner import ClaudeReferenceRunner
from boundary.layout import JobPaths


class SandboxOnly(ClaudeReferenceRunner):
    """Only the sandbox's file rules, and permissions skipped (as many CI runners do): the sandbox confines
    Bash, not the Read, Grep and Glob tools, which run in the unconfined agent process."""

    name = "claude-sandbox-only"

    def deny_rules(self, paths: JobPaths) -> list[str]:
        return []

    def extra_flags(self) -> list[str]:
        return ["--dangerously-skip-permissions"]


class NothingHolds(SandboxOnly):
    """Permissions skipped and the sandbox off: every channel reaches job A."""

    name = "claude-nothing-holds"

    def __init__(self, sandbox: str = "passthrough") -> None:
        super().__init__(sandbox=sandbox)
