"""A runner that is a command, in any language: `--runner-cmd "COMMAND ARGS"` (docs/runner-protocol.md).

boundary runs the command with a verb appended and reads one JSON object from its stdout. The Python
`Runner` contract is what the rest of the harness sees; this adapter turns each call into a verb.
"""

from __future__ import annotations

import functools
import os
import shlex
from pathlib import Path
from typing import ClassVar

from boundary import proc
from boundary.agents.base import Agent, offering
from boundary.layout import JobPaths
from boundary.model.view import PathView
from boundary.runners.contract import Job
from boundary.runners.knowledge import AGENTS
from boundary.runners.protocol import (
    VERSION,
    Description,
    ProtocolError,
    SetupAnswer,
    read_describe,
    read_empty,
    read_job,
    read_setup,
)
from boundary.sandboxes import STARTUP_FAILURES, ShellPolicy
from boundary.toolchain import tools

TIMEOUT_S = {"describe": 30.0, "setup": 120.0, "create-job": 120.0, "remove-job": 30.0}
STDERR_TAIL = 800


class DescribedSandbox:
    """The runner's sandbox as its `describe` names it; what boundary knows of a named one is added."""

    set_in: ClassVar[str] = "the runner"

    def __init__(self, name: str, version: str, startup_failures: tuple[str, ...]) -> None:
        self.name = name
        known = STARTUP_FAILURES.get(name, ())  # any name is the runner's to choose
        self.startup_failures = tuple(dict.fromkeys((*known, *startup_failures)))
        self._version = version

    def version(self) -> str:
        return self._version

    def wrapper(self, policy: ShellPolicy, workdir: Path) -> str:
        raise ValueError(f"sandbox {self.name} is set up by the runner under test, not by boundary")

    def tmpdir_problem(self, tmpdir: Path) -> str | None:
        return None


class CommandRunner:
    """The runner under test, driven through its command's verbs."""

    def __init__(self, command: str, sandbox: str | None = None) -> None:
        self.command = command
        self.argv = shlex.split(command)
        if not self.argv:
            raise ProtocolError("--runner-cmd: expected a command, got an empty string")
        self.sandbox_override = sandbox
        self.state: Path | None = None
        self._setup = SetupAnswer(None, None, [])
        description = describe(self.command, sandbox)
        self.description = description
        self.name = description.name
        self.agent: Agent = offering(AGENTS[description.agent](), description.expected_tools)
        self.sandbox = DescribedSandbox(description.sandbox, description.sandbox_version, description.startup_failures)
        self.denials = dict(description.denials)
        self.network_watch = description.network_watch  # "packets": its jobs cannot run under ptrace
        self.enter: tuple[str, ...] = ()  # where its verbs run: this machine, or the host its jobs run on
        self.off_env: dict[str, str] = {}  # what turns its layers off, where some are (`--layers each`)

    def run_verbs_in(self, enter: tuple[str, ...]) -> None:
        self.enter = enter

    def cannot_turn_off(self) -> dict[str, str]:
        return {
            layer: "its `describe` gives no `layer_off` for it"
            for layer in self.denials
            if layer not in self.description.layer_off
        }

    def turn_off(self, layers: frozenset[str]) -> None:
        self.off_env = {name: value for layer in layers for name, value in self.description.layer_off[layer].items()}

    # -- the contract ---------------------------------------------------------------
    def setup(self, state: Path, repository: Path, secret: str) -> None:
        state.mkdir(parents=True, exist_ok=True)
        self.state = state
        answer = self._call("setup", str(state), str(repository), extra={"BOUNDARY_RUNNER_SECRET": secret})
        self._setup = read_setup(answer, state)

    def account_db(self) -> Path | None:
        return self._setup.account_db

    def account_dir(self) -> Path | None:
        return self._setup.account_dir

    def credentials(self) -> list[Path]:
        return list(self._setup.credentials)

    def create_job(self, name: str, model_url: str) -> Job:
        answer = read_job(self._call("create-job", name, model_url), name, self._state())
        paths = JobPaths(name, answer.checkout, answer.data, answer.runner_files, answer.tmp)
        view = PathView.of(answer.paths_inside.items())
        return Job(name, paths, answer.argv, answer.env, answer.hooks, answer.files, view)

    def remove_job(self, job: Job) -> None:
        read_empty("remove-job", self._call("remove-job", job.name))

    def expected_tools(self) -> frozenset[str]:
        return self.description.expected_tools

    def forbidden_tools(self) -> tuple[str, ...]:
        return self.description.forbidden_tools

    # -- calls ------------------------------------------------------------------------
    def _call(self, verb: str, *args: str, extra: dict[str, str] | None = None) -> str:
        env = call_env(self.sandbox_override, self.state) | self.off_env | (extra or {})
        env |= {"BOUNDARY_DISPOSABLE_HOST": "1"} if self.enter else {}  # what it writes there is thrown away
        return call(self.argv, verb, args, env, self.enter)

    def _state(self) -> Path:
        if self.state is None:
            raise RuntimeError("the runner has no state yet: call setup() first")
        return self.state


@functools.cache
def describe(command: str, sandbox: str | None) -> Description:
    """The runner's description; asked once per process (it must not change within a run)."""
    return read_describe(call(shlex.split(command), "describe", (), call_env(sandbox, None)))


def call(argv: list[str], verb: str, args: tuple[str, ...], env: dict[str, str], enter: tuple[str, ...] = ()) -> str:
    """Run `argv verb args…` (inside a host, through `enter`, in this directory as that host sees it); its stdout,
    or a ProtocolError saying what went wrong and what the runner said."""
    shown = shlex.join([*argv, verb, *args])
    # nsenter leaves a command in the host's `/`; its own --wd would keep this machine's directory open instead
    where = [*enter, "env", f"--chdir={os.getcwd()}"] if enter else []
    try:
        done = proc.run([*where, *argv, verb, *args], timeout=TIMEOUT_S[verb], what=f"the runner's {verb}", env=env)
    except proc.ProcTimeout as error:
        raise ProtocolError(f"runner {verb}: {error.problem} Fix: run `{shown}` by hand.") from None
    except OSError as error:
        raise ProtocolError(f"runner {verb}: cannot start `{shown}`: {error}") from None
    if done.returncode != 0:
        said = done.stderr.strip()[-STDERR_TAIL:] or done.stdout.strip()[-STDERR_TAIL:] or "(nothing)"
        raise ProtocolError(f"runner {verb}: expected exit 0, got {done.returncode} from `{shown}`; it said: {said}")
    return done.stdout


def call_env(sandbox: str | None, state: Path | None) -> dict[str, str]:
    """boundary's environment, and what the protocol adds: its version, the state, a sandbox override, the
    pinned tools (first on PATH)."""
    env = {**os.environ, "BOUNDARY_PROTOCOL": str(VERSION)}
    env |= {"BOUNDARY_STATE": str(state)} if state else {}
    env |= {"BOUNDARY_SANDBOX": sandbox} if sandbox else {}
    env |= pinned_tools()
    bins = [env[key] for key in ("BOUNDARY_TOOLS_BIN",) if key in env]
    bins += [str(Path(env["BOUNDARY_NODE"]).parent)] if "BOUNDARY_NODE" in env else []
    env["PATH"] = os.pathsep.join([*bins, env.get("PATH", "/usr/bin:/bin")])
    return env


def pinned_tools() -> dict[str, str]:
    """Where the pinned agents, sandboxes, node and opencode's plugin SDK are, as far as they are installed."""
    found: dict[str, str] = {}
    try:
        found["BOUNDARY_NODE"] = str(tools.node())
        found["BOUNDARY_TOOLS_BIN"] = str(tools.executable("opencode").parent)
        found["BOUNDARY_OPENCODE_SDK"] = str(tools.OPENCODE_CONFIG.require())
    except tools.ToolsError:
        pass  # not installed yet (e.g. `boundary runner check` on a fresh machine): the runner says what it lacks
    return found
