"""The Runner contract: what `boundary` asks of the runner under test.

A runner owns the layout on disk, the agent's config and the sandbox around it. Two kinds implement
it: a Python class (`--runner package.module:attr`, attr called with `sandbox=<name>`) and a command in
any language (`--runner-cmd`, `boundary.runners.command`), which speaks docs/runner-protocol.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from boundary.agents.base import Agent
from boundary.layout import JobPaths
from boundary.model.view import PathView
from boundary.sandboxes import Sandbox


@dataclass
class Job:
    """One agent job as launched: the harness runs argv in a loopback-only network namespace."""

    name: str
    paths: JobPaths
    argv: list[str]
    env: dict[str, str]
    hooks: list[list[str]] = field(default_factory=list)  # run on the host (as root) just before the job
    files: list[Path] = field(default_factory=list)  # what the runner says it wrote for the job (tamper targets)
    view: PathView = field(default_factory=PathView)  # where the job sees host paths its runner binds elsewhere

    @property
    def checkout(self) -> Path:
        return self.paths.checkout

    @property
    def data_dir(self) -> Path:
        return self.paths.data

    def config_refused(self, agent: Agent, state: Path) -> str | None:
        """Why the job is not run, in one line, when the agent would load its configuration from outside STATE
        (its environment's HOME, XDG_CONFIG_HOME, CLAUDE_CONFIG_DIR, CODEX_HOME, …): boundary attacks a job's
        configuring files by rewriting them, which it does only where it throws them away afterwards."""
        outside = [str(d) for d in agent.config_dirs(self.env) if not d.resolve().is_relative_to(state.resolve())]
        if not outside:
            return None
        return (
            f"create-job {self.name}: the agent would load its configuration from {', '.join(outside)}, outside "
            f"STATE ({state}); boundary rewrites a job's configuring files to attack them, and only under STATE can "
            "it throw them away: give each job its own HOME (and CLAUDE_CONFIG_DIR, CODEX_HOME, XDG_CONFIG_HOME, if "
            "set) under $BOUNDARY_STATE (docs/runner-protocol.md)"
        )


@runtime_checkable
class Runner(Protocol):
    name: str

    @property
    def agent(self) -> Agent: ...  # read-only here, so a runner may hold a concrete agent

    @property
    def sandbox(self) -> Sandbox: ...

    denials: dict[str, tuple[str, ...]]  # layer -> texts that show that layer refused

    def setup(self, state: Path, repository: Path, secret: str) -> None:
        """Create the runner's state (account, database) for jobs of `repository`; keep `secret` (a credential
        of the account's, as an API key) where the runner keeps credentials. No job may ever see it."""

    def account_db(self) -> Path | None:
        """The database (SQLite) every job of the account shares; None: it has none."""

    def account_dir(self) -> Path | None:
        """The directory of the files every job of the account shares (used when it names no database)."""

    def credentials(self) -> list[Path]:
        """The files that hold the runner secret (none: it is kept elsewhere, e.g. by a proxy)."""

    def create_job(self, name: str, model_url: str) -> Job:
        """Check out the repository and write everything the job needs; do not start it."""

    def remove_job(self, job: Job) -> None: ...

    def expected_tools(self) -> frozenset[str]: ...

    def forbidden_tools(self) -> tuple[str, ...]: ...


@runtime_checkable
class VerbsOnHost(Protocol):
    """A runner whose verbs can run on the host its jobs run on: a command, or a Python runner (runners/hosted.py)."""

    def run_verbs_in(self, enter: tuple[str, ...]) -> None:
        """From now on, run each verb through `enter` (a command prefix that runs its argv inside the host); `()`:
        on this machine again (the host is going)."""


@runtime_checkable
class LayersOff(Protocol):
    """A runner that can turn each of its claimed layers off, to run with one layer alone (`--layers each`)."""

    def cannot_turn_off(self) -> dict[str, str]:
        """Each claimed layer it cannot turn off, and why."""

    def turn_off(self, layers: frozenset[str]) -> None:
        """From now on, create jobs with these claimed layers off."""
