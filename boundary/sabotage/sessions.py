"""Sabotaged runners for the `sessions` scenario: job B, continued, is given job A's session.

Every agent continues the newest session of the job's *working directory* (opencode among the sessions of the
account's database, Claude Code in its config dir's `projects/<path>/`, codex in CODEX_HOME, `resume --last`
filtered by cwd). So a runner leaks a session when its jobs share the directory they work in and the place
the agent keeps sessions — as a persistent CI runner does: one workspace path per repository (like
GitHub Actions' `$GITHUB_WORKSPACE`, cleaned and checked out again for each job), and the agent's home that of
the account (`~/.claude`, `~/.codex`). opencode's reference runner already keeps every job's sessions in the
account's database (`OPENCODE_DB`): for it, the one workspace is enough.

Select one with `--agent AGENT --runner boundary.sabotage.sessions:NAME --scenario sessions`.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import ClassVar

from boundary.agents.claude import ClaudeCode
from boundary.agents.codex import Codex
from boundary.layout import JobPaths
from boundary.runners.claude import ClaudeRunner
from boundary.runners.codex import CodexRunner
from boundary.runners.opencode import OpencodeRunner

WORKSPACE = "workspace"  # the one checkout path of every job of the repository


def one_workspace(paths: JobPaths) -> JobPaths:
    """The job's paths, its checkout that of every job: `checkouts/workspace`."""
    return JobPaths(paths.name, paths.checkout.with_name(WORKSPACE), paths.data, paths.private, paths.scratch)


class OneWorkspace:
    """The checkout is one path for every job: cleaned and cloned again when a job is created."""

    def job_paths(self, name: str) -> JobPaths:
        return one_workspace(super().job_paths(name))  # type: ignore[misc]

    def checked_out(self, name: str) -> JobPaths:
        shutil.rmtree(self.job_paths(name).checkout, ignore_errors=True)
        return super().checked_out(name)  # type: ignore[misc, no-any-return]


class OpencodeOneWorkspace(OneWorkspace, OpencodeRunner):
    """opencode jobs of one repository in one workspace path: `run --continue` finds the newest session of that
    directory in the account's database, job A's."""

    name = "opencode-one-workspace"


class AccountHome:
    """An agent whose home is the account's for every job, beside the checkouts (as `~/.claude` is the user's)."""

    name: ClassVar[str]

    def config_dir(self, paths: JobPaths) -> Path:
        return paths.checkout.parent / f"account.{self.name}"


class AccountClaudeCode(AccountHome, ClaudeCode):
    """Claude Code, its CLAUDE_CONFIG_DIR the account's."""


class AccountCodex(AccountHome, Codex):
    """codex, its CODEX_HOME the account's."""


class ClaudeOneWorkspace(OneWorkspace, ClaudeRunner):
    """Claude Code jobs in one workspace path with the account's CLAUDE_CONFIG_DIR: `--continue` finds the newest
    conversation of that directory, job A's."""

    name = "claude-one-workspace"
    agent = AccountClaudeCode()


class CodexOneWorkspace(OneWorkspace, CodexRunner):
    """codex jobs in one workspace path with the account's CODEX_HOME: `exec resume --last` finds the newest
    session of that directory, job A's."""

    name = "codex-one-workspace"
    agent = AccountCodex()
