"""The Runner contract, and the reference runner: what a careful production runner does.

A runner owns the layout on disk, the agent's config and the sandbox around
it. `boundary` drives it through `Runner`; `--runner package.module:attr`
selects one (attr is called with `sandbox=<name>` and returns a Runner).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from boundary.agents.base import Agent
from boundary.agents.opencode import (
    EXPECTED_TOOLS,
    FORBIDDEN_TOOLS,
    GUARD_PLUGIN,
    NO_PROJECT_CONFIG,
    PROJECT_AGENT_PATHS,
    PROJECT_PROTECTED,
    OpenCode,
)
from boundary.layout import JobPaths, RunnerLayout, clone
from boundary.sandboxes import OS_DENIALS, Sandbox, ShellPolicy, get_sandbox

# Starts the agent with the repository's agent configuration hidden from it, and the files the runner wrote for
# the job read-only: the agent process is unconfined, so only a mount namespace keeps it from either.
LAUNCHER = """#!/bin/bash
# boundary reference runner: start the agent; what the checkout carries for agents is hidden at each start.
set -euo pipefail
args=(--dev-bind / / --die-with-parent)
for file in {readonly}; do args+=(--ro-bind "$file" "$file"); done
for relative in {hidden}; do
  path={checkout}/"$relative"
  if [ -d "$path" ] && [ ! -L "$path" ]; then args+=(--tmpfs "$path")
  elif [ -e "$path" ] || [ -L "$path" ]; then args+=(--ro-bind /dev/null "$path"); fi
done
exec bwrap "${{args[@]}}" -- "$@"
"""

GUARD_DENIAL = "boundary guard:"


@dataclass
class Job:
    """One agent job as launched: the harness runs argv in a loopback-only network namespace."""

    name: str
    paths: JobPaths
    argv: list[str]
    env: dict[str, str]
    hooks: list[list[str]] = field(default_factory=list)  # run on the host (as root) just before the job

    @property
    def checkout(self) -> Path:
        return self.paths.checkout

    @property
    def data_dir(self) -> Path:
        return self.paths.data


@runtime_checkable
class Runner(Protocol):
    name: str

    @property
    def agent(self) -> Agent: ...  # read-only here, so a runner may hold a concrete agent

    sandbox: Sandbox
    denials: dict[str, tuple[str, ...]]  # layer -> texts that show that layer refused

    def setup(self, state: Path, repository: Path) -> None:
        """Create the runner's state (account, database) for jobs of `repository`."""

    def account_db(self) -> Path: ...

    def create_job(self, name: str, model_url: str) -> Job:
        """Check out the repository and write everything the job needs; do not start it."""

    def remove_job(self, job: Job) -> None: ...

    def expected_tools(self) -> frozenset[str]: ...

    def forbidden_tools(self) -> tuple[str, ...]: ...


class ReferenceRunner:
    """opencode jobs with per-job data dirs, a guard plugin, and the shell under a sandbox.

    Built from small parts; subclass and override one to test a variation.
    """

    name = "reference"
    hidden_paths: tuple[str, ...] = PROJECT_AGENT_PATHS  # the checkout's agent configuration

    def __init__(self, sandbox: str = "srt") -> None:
        self.agent = OpenCode()
        self.sandbox = get_sandbox(sandbox)
        self.denials = {**self.agent.denials, "runner plugin": (GUARD_DENIAL,), "OS sandbox": OS_DENIALS}
        self.layout: RunnerLayout | None = None
        self.repository: Path | None = None

    # -- the contract ---------------------------------------------------------------
    def setup(self, state: Path, repository: Path) -> None:
        self.layout = RunnerLayout(state)
        self.layout.create()
        self.repository = repository

    def account_db(self) -> Path:
        return self._layout().account_db

    def create_job(self, name: str, model_url: str) -> Job:
        paths = self.checked_out(name)
        config_dir = self.agent.seed_config_dir(paths)
        config = self.agent.config(model_url, self.permission(paths), self.plugins(paths))
        config["tools"] = {pattern: False for pattern in self.removed_tools()}
        config.update(self.agent_config_extra(paths))
        (config_dir / "opencode.json").write_text(json.dumps(config, indent=2))
        shell = self.write_shell_wrapper(paths)
        return Job(name, paths, self.launch_argv(paths), self.job_env(paths, shell))

    def remove_job(self, job: Job) -> None:
        job.paths.remove()

    def expected_tools(self) -> frozenset[str]:
        return EXPECTED_TOOLS

    def forbidden_tools(self) -> tuple[str, ...]:
        return FORBIDDEN_TOOLS

    # -- the parts ------------------------------------------------------------------
    def job_paths(self, name: str) -> JobPaths:
        return self._layout().job(name)

    def checked_out(self, name: str) -> JobPaths:
        """The job's paths, with the repository cloned into its checkout and its directories made."""
        paths = self.job_paths(name)
        if self.repository is None:
            raise RuntimeError("the runner has no repository yet: call setup() first")
        clone(self.repository, paths.checkout)
        paths.create_dirs()
        return paths

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        """Agent rules: no directory outside the checkout but the job's own data."""
        removed = {pattern: "deny" for pattern in self.removed_tools()}
        return {"external_directory": {"*": "deny", f"{paths.data}/*": "allow"}, **removed}

    def removed_tools(self) -> tuple[str, ...]:
        """Tools the runner takes away from the model: config `tools: false`, a deny rule, and the guard."""
        return self.forbidden_tools()

    def plugins(self, paths: JobPaths) -> list[Any]:
        """The guard: file tools read only the job's roots, write only its checkout (never what configures
        the agent or git), and forbidden tools are removed."""
        options = {
            "roots": [str(paths.checkout), str(paths.data)],
            "writeRoots": [str(paths.checkout)],
            "protected": [str(p) for p in self.protected_paths(paths)],
            "forbiddenTools": list(self.removed_tools()),
        }
        return [[self.guard_uri(), options]]

    def protected_paths(self, paths: JobPaths) -> list[Path]:
        """Inside the checkout, what no channel of the job may write: agent configuration, git's hooks and config."""
        return [paths.checkout / relative for relative in PROJECT_PROTECTED]

    def launch_argv(self, paths: JobPaths, agent_argv: list[str] | None = None) -> list[str]:
        """The agent, started by a launcher that hides the checkout's agent configuration from it."""
        launcher = paths.runner_dir / "launch"
        written = [p for p in paths.runner_dir.rglob("*") if p.is_file() and not p.is_symlink()]
        readonly = " ".join(shlex.quote(str(p)) for p in [*written, launcher])
        hidden = " ".join(shlex.quote(relative) for relative in self.hidden_paths)
        text = LAUNCHER.format(readonly=readonly, checkout=shlex.quote(str(paths.checkout)), hidden=hidden)
        launcher.write_text(text)
        launcher.chmod(0o755)
        return [str(launcher), *(agent_argv or self.agent.argv())]

    def guard_uri(self) -> str:
        return GUARD_PLUGIN.as_uri()

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        """More agent config (e.g. MCP servers), merged over the rest."""
        return {}

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        """The job's whole environment: nothing of the harness's leaks in; project configuration off."""
        return {**self.agent.env(paths, self.account_db(), shell), **NO_PROJECT_CONFIG}

    def shell_policy(self, paths: JobPaths) -> ShellPolicy:
        """The shell sees none of the runner's state but its own checkout."""
        state = self._layout().state
        return ShellPolicy(
            deny_read=[state],
            allow_read=[paths.checkout, paths.tmp],
            allow_write=[paths.checkout, paths.tmp],
            deny_write=self.protected_paths(paths),
        )

    def write_shell_wrapper(self, paths: JobPaths) -> Path:
        problem = self.sandbox.tmpdir_problem(paths.tmp)
        if problem:
            raise RuntimeError(f"job {paths.name}: {problem} (the runner's state is under {self._layout().state})")
        wrapper = paths.runner_dir / "shell"
        wrapper.write_text(self.sandbox.wrapper(self.shell_policy(paths), paths.runner_dir))
        wrapper.chmod(0o755)
        return wrapper

    def _layout(self) -> RunnerLayout:
        if self.layout is None:
            raise RuntimeError("the runner has no state yet: call setup() first")
        return self.layout
