"""What every reference runner does, whatever its agent: one checkout and data directory per job, the
runner's files out of the job's reach, and the checkout's agent configuration hidden from the agent.

One subclass per agent (`opencode.py`, `claude.py`, `codex.py`) writes that agent's configuration and
launch; subclass one and override a part to test a variation (`boundary.sabotage`).
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from boundary.agents.base import Agent
from boundary.layout import JobPaths, RunnerLayout, clone
from boundary.runners.contract import Job
from boundary.sandboxes import OS_DENIALS, Sandbox, ShellPolicy, get_sandbox

# Starts the agent with the repository's agent configuration hidden from it, and the files the runner wrote for
# the job read-only: the agent process is unconfined, so only a mount namespace keeps it from either.
LAUNCHER = """#!/bin/bash
# boundary reference runner: start the agent; what the checkout carries for agents is hidden at each start.
set -euo pipefail
# An IPC namespace of its own: System V objects and POSIX queues are not files, so no path rule hides them.
args=(--dev-bind / / --die-with-parent --unshare-ipc)
for file in {readonly}; do args+=(--ro-bind "$file" "$file"); done
for relative in {hidden}; do
  path={checkout}/"$relative"
  if [ -d "$path" ] && [ ! -L "$path" ]; then args+=(--tmpfs "$path")
  elif [ -e "$path" ] || [ -L "$path" ]; then args+=(--ro-bind /dev/null "$path"); fi
done
exec bwrap "${{args[@]}}" -- "$@"
"""


class ReferenceRunner(ABC):
    """The agent-independent parts; a subclass names its `agent` and `default_sandbox`, and writes the job's
    configuration and launch in `configure_job`."""

    name = "reference"
    agent: Agent  # a class attribute of each subclass: an agent object holds no state of its own
    default_sandbox: ClassVar[str]
    # The runner's own refusals by layer; in a layer the agent's `denials` name too, the runner's come first.
    runner_denials: ClassVar[dict[str, tuple[str, ...]]] = {"OS sandbox": OS_DENIALS}
    launcher: ClassVar[str] = LAUNCHER  # a format string: readonly, checkout, hidden
    switches: ClassVar[frozenset[str]] = frozenset({"OS sandbox"})  # the layers it can turn off (`turn_off`)
    hard_linked_clones: ClassVar[bool] = False  # git's local default; never: the objects would be every job's

    def __init__(self, sandbox: str | None = None) -> None:
        self.sandbox: Sandbox = get_sandbox(sandbox or self.default_sandbox)
        self.denials: dict[str, tuple[str, ...]] = dict(self.agent.denials)
        for layer, texts in self.runner_denials.items():
            self.denials[layer] = (*texts, *self.denials.get(layer, ()))
        self.layout: RunnerLayout | None = None
        self.repository: Path | None = None
        self.off: frozenset[str] = frozenset()  # its layers turned off (`--layers each`)

    def cannot_turn_off(self) -> dict[str, str]:
        return {
            layer: f"no switch for it in {type(self).__name__}" for layer in self.denials if layer not in self.switches
        }

    def turn_off(self, layers: frozenset[str]) -> None:
        """The OS sandbox off is the passthrough sandbox (the agent's own sandbox off); a subclass reads `off` for
        the others."""
        self.off = layers
        if "OS sandbox" in layers:
            self.sandbox = get_sandbox("passthrough")

    @property
    def hidden_paths(self) -> tuple[str, ...]:
        """The checkout's agent configuration, hidden from the agent process at each start."""
        return self.agent.project_agent_paths

    # -- the contract ---------------------------------------------------------------
    def setup(self, state: Path, repository: Path, secret: str) -> None:
        self.layout = RunnerLayout(state)
        self.layout.create()
        self.repository = repository
        self.keep_secret(secret)

    def account_db(self) -> Path:
        return self._layout().account_db

    def account_dir(self) -> Path:
        return self._layout().account_dir

    def credentials(self) -> list[Path]:
        return [self._layout().account_dir / "credentials"]

    def keep_secret(self, secret: str) -> None:
        """With the account, out of every job's reach (the shell's sandbox denies the state; the agents' file
        tools are held to the job's roots); only the runner reads it, as it would an API key."""
        for path in self.credentials():
            path.touch(mode=0o600)
            path.write_text(secret + "\n")

    def create_job(self, name: str, model_url: str) -> Job:
        return self.configure_job(self.checked_out(name), model_url)

    @abstractmethod
    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        """Write the agent's configuration and launch for the job, its repository checked out in `paths`."""

    def remove_job(self, job: Job) -> None:
        job.paths.remove()

    @abstractmethod
    def expected_tools(self) -> frozenset[str]: ...

    @abstractmethod
    def forbidden_tools(self) -> tuple[str, ...]: ...

    # -- the parts ------------------------------------------------------------------
    def job_paths(self, name: str) -> JobPaths:
        return self._layout().job(name)

    def checked_out(self, name: str) -> JobPaths:
        """The job's paths, with the repository cloned into its checkout and its directories made."""
        paths = self.job_paths(name)
        if self.repository is None:
            raise RuntimeError("the runner has no repository yet: call setup() first")
        clone(self.repository, paths.checkout, self.hard_linked_clones)
        paths.create_dirs()
        return paths

    def protected_paths(self, paths: JobPaths) -> list[Path]:
        """Inside the checkout, what no channel of the job may write: agent configuration, git's hooks and config."""
        return [paths.checkout / relative for relative in self.agent.project_protected]

    def launch_argv(self, paths: JobPaths, agent_argv: list[str]) -> list[str]:
        """The agent, started by a launcher that hides the checkout's agent configuration from it."""
        launcher = paths.runner_dir / "launch"
        written = [p for p in paths.runner_dir.rglob("*") if p.is_file() and not p.is_symlink()]
        readonly = " ".join(shlex.quote(str(p)) for p in [*written, launcher])
        hidden = " ".join(shlex.quote(relative) for relative in self.hidden_paths)
        text = self.launcher.format(readonly=readonly, checkout=shlex.quote(str(paths.checkout)), hidden=hidden)
        launcher.write_text(text)
        launcher.chmod(0o755)
        return [str(launcher), *agent_argv]

    def shell_policy(self, paths: JobPaths) -> ShellPolicy:
        """The shell sees none of the runner's state but its own checkout and TMPDIR."""
        state = self._layout().state
        return ShellPolicy(
            deny_read=[state],
            allow_read=[paths.checkout, paths.tmp],
            allow_write=[paths.checkout, paths.tmp],
            deny_write=self.protected_paths(paths),
        )

    def _layout(self) -> RunnerLayout:
        if self.layout is None:
            raise RuntimeError("the runner has no state yet: call setup() first")
        return self.layout
