"""What the harness needs of an agent under test: how to launch and script it, and where it keeps what."""

from __future__ import annotations

import errno
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from boundary.beacon import Beacon
from boundary.model.script import ToolCall
from boundary.verdict import harness_note


class Agent(Protocol):
    name: ClassVar[str]
    denials: ClassVar[dict[str, tuple[str, ...]]]  # layer -> texts of the agent's own refusals
    non_boundary_refusals: ClassVar[tuple[str, ...]]  # refusals for reasons other than a boundary
    # The refusals that end its job run alone (opencode's `run` ends on an ask it auto-rejects), each printed at a
    # line's start: the only words that may answer the call a rerun ended on (`verdict.with_ended_refusals`).
    ending_refusals: ClassVar[tuple[str, ...]]
    serial_tools: ClassVar[frozenset[str]]  # tools the script calls one at a time
    read_first_refusals: ClassVar[tuple[str, ...]]  # its refusal to write a file it has not read
    lacks: ClassVar[frozenset[str]]  # channel kinds (read, grep, glob, shell, write, edit) it has no tool for
    not_offered: ClassVar[frozenset[str]]  # of those, the kinds it has a tool for that the runner does not offer
    # channel kinds whose tool sees a /proc file as empty (its size is 0): no control through them can succeed there
    procfs_blind: ClassVar[frozenset[str]]
    search_incomplete: ClassVar[tuple[str, ...]]  # what its search tools say when they cut their results short
    command: ClassVar[str]  # its executable's name
    batch_mode: ClassVar[tuple[str, ...]]  # the arguments that run it without a terminal (one follows its command)
    own_dirs_env: ClassVar[tuple[str, ...]]  # environment variables that name a job's own agent directories
    max_shell_command: ClassVar[int]  # the longest command its shell tool takes
    saved_lines: ClassVar[int]  # lines (about 40 bytes each) a shell prints for the agent to save its output aside
    # A shell call returns by then with its command still running (codex's exec_command yields after 30 s; the
    # command runs on until the agent exits); None: the call waits for its command, up to its own timeout.
    call_yields_after_s: ClassVar[float | None]
    storage_targets: ClassVar[tuple[str, ...]]  # cross-job targets: what the agent saves in a job's data
    # The tools its pinned version offers when started with its default settings (measured; `boundary:agent-default`)
    default_tools: ClassVar[frozenset[str]]
    config_plant: ClassVar[tuple[str, ...]]  # files to plant in an empty config directory (tamper targets)
    project_agent_paths: ClassVar[tuple[str, ...]]  # checkout-relative: what a runner hides from the agent at start
    project_protected: ClassVar[tuple[str, ...]]  # checkout-relative: what no channel of the job may write

    def version(self) -> str: ...

    def argv(self) -> list[str]:
        """A non-interactive run that takes its whole task from the scripted model."""

    # The tool vocabulary: one call per channel kind (a kind in `lacks` is never asked for).
    def read(self, id: str, path: Path) -> ToolCall: ...

    def write(self, id: str, path: Path, content: str) -> ToolCall: ...

    def edit(self, id: str, path: Path, old: str, new: str) -> ToolCall: ...

    def grep(self, id: str, pattern: str, path: Path) -> ToolCall: ...

    def glob(self, id: str, pattern: str, path: Path) -> ToolCall: ...

    def shell(self, id: str, command: str, timeout_s: float | None = None) -> ToolCall: ...

    def full_result(self, tool_result: str) -> str:
        """The result with anything the agent saved aside instead of showing the model."""

    def store(self, env: dict[str, str]) -> Path:
        """Where the agent keeps a job's own data (sessions, saved output), given the job's environment."""

    def saved_output(self, env: dict[str, str], tool_result: str) -> Path | None:
        """Where the agent saved the output of a shell call whose result was `tool_result`."""

    def storage_path(self, target: str, env: dict[str, str], checkout: Path, name: str) -> Path:
        """Where the agent would keep a file of kind `target` (one of `storage_targets`) named after `name`,
        for a job of `checkout` with the environment `env`."""

    # A hostile repository: every kind of code the agent loads from a project, each carrying a beacon.
    hostile_beacons: ClassVar[tuple[str, ...]]  # one name per place the agent runs project code from
    permissive_config_turns_off: ClassVar[str]  # the layer the repository's permissive config would remove

    def hostile_repository(self, beacons: dict[str, Beacon]) -> dict[str, str]:
        """Files a hostile repository commits: each beacon where the agent would run it, and a permissive config."""

    def armed(self, path: Path, config: dict[str, Any], command: list[str], name: str) -> dict[str, Any]:
        """`config` (the JSON file at `path`, as the tamper attack leaves it) with one more entry that runs
        `command` when the agent starts, where the agent runs commands from that file (a start hook, an MCP
        server named `name`); unchanged where it runs none."""

    def project_config_paths(self) -> tuple[tuple[str, str], ...]:
        """Checkout-relative paths the agent reads at start, and what each does."""

    def config_dirs(self, env: dict[str, str]) -> list[Path]:
        """The directories the agent loads configuration from, given its environment."""


# How opencode and Claude Code point the model at an output too long to show it whole.
SAVED_OUTPUT = re.compile(r"Full output saved to: (\S+)")


def saved_aside(tool_result: str) -> Path | None:
    """Where the agent saved the output this result only shows part of (None: it is all there)."""
    match = SAVED_OUTPUT.search(tool_result)
    return Path(match.group(1)) if match else None


def with_saved_output(tool_result: str, saved: Path | None) -> str:
    """The result and the output the agent saved aside (a large output is truncated for the model).

    When the harness cannot read it, what the job got back is not all known: a harness note says so, and
    makes the result INCONCLUSIVE. It names the error by its code, never by the OS's words ("No such file or
    directory" is an OS sandbox's denial text), though no denial text is looked for in a noted result at all.
    """
    if saved is None:
        return tool_result
    try:
        return tool_result + "\n" + saved.read_bytes().decode(errors="replace")
    except OSError as error:
        code = errno.errorcode.get(error.errno or 0, type(error).__name__)
        return tool_result + "\n" + harness_note(f"could not read the saved output {saved} ({code})")


def home(env: dict[str, str]) -> Path:
    """The job's HOME, where an agent's defaults live when its environment names no directory of its own."""
    return Path(env.get("HOME", "/root"))


@dataclass(frozen=True)
class Vocabulary:
    """An agent's file and shell tools, where they take the same arguments under names of its own."""

    tools: dict[str, str]  # channel kind (read, write, edit, grep, glob, shell) -> the agent's tool for it
    file_key: str  # the argument naming the file of a read, write or edit
    edit_keys: tuple[str, str]  # an edit's arguments: the text to replace, and what replaces it
    grep_extra: dict[str, str] = field(default_factory=dict)  # more arguments to every grep


# The channel kinds a script can do without (codex has no tool for any of them): their cells leave the plan.
OPTIONAL_KINDS = ("read", "grep", "glob")


def tool_of(agent: Agent, kind: str) -> str:
    """The tool the agent's channels of `kind` (read, write, edit, grep, glob, shell) call, by the name the model
    sees (a kind in `lacks` raises: the agent has none)."""
    root = Path("/")
    calls: dict[str, Callable[[], ToolCall]] = {
        "read": lambda: agent.read("t", root),
        "write": lambda: agent.write("t", root, ""),
        "edit": lambda: agent.edit("t", root, "", ""),
        "grep": lambda: agent.grep("t", ".", root),
        "glob": lambda: agent.glob("t", "*", root),
        "shell": lambda: agent.shell("t", "true"),
    }
    return calls[kind]().tool


CHANNEL_KINDS = ("read", "write", "edit", "grep", "glob", "shell")


def channel_tools(agent: Agent) -> frozenset[str]:
    """The tools the scenarios' channels drive, by the name the model sees."""
    return frozenset(tool_of(agent, kind) for kind in CHANNEL_KINDS if kind not in agent.lacks)


def not_offered(agent: Agent, offered: frozenset[str]) -> frozenset[str]:
    """The optional channel kinds the agent has a tool for that is not among `offered` (the tools a runner says the
    model is given: its expected tools, which the offered-tools check holds to what the model is really sent)."""
    return frozenset(k for k in OPTIONAL_KINDS if k not in agent.lacks and tool_of(agent, k) not in offered)


def offering(agent: Agent, offered: frozenset[str]) -> Agent:
    """The agent as a runner that gives the model only `offered` has it: a read, grep or glob tool not offered is
    planned out of every script and named in the report, as for an agent that has none (a runner that starts the
    agent with fewer tools than boundary's reference ones must not make every cell of that tool INCONCLUSIVE). A
    shell, write or edit tool not offered is not: every scenario needs them, and says so when they are missing."""
    missing = not_offered(agent, offered)
    if not missing:
        return agent
    kind = type(agent)
    planned: type[Agent] = type(kind.__name__, (kind,), {"lacks": agent.lacks | missing, "not_offered": missing})
    return planned()


class VocabularyTools:
    """The tool-call methods of `Agent`, from the agent's `vocabulary`; a shell timeout is in milliseconds."""

    vocabulary: ClassVar[Vocabulary]

    def _call(self, id: str, kind: str, arguments: dict[str, Any]) -> ToolCall:
        return ToolCall(id, self.vocabulary.tools[kind], arguments)

    def read(self, id: str, path: Path) -> ToolCall:
        return self._call(id, "read", {self.vocabulary.file_key: str(path)})

    def write(self, id: str, path: Path, content: str) -> ToolCall:
        return self._call(id, "write", {self.vocabulary.file_key: str(path), "content": content})

    def edit(self, id: str, path: Path, old: str, new: str) -> ToolCall:
        old_key, new_key = self.vocabulary.edit_keys
        return self._call(id, "edit", {self.vocabulary.file_key: str(path), old_key: old, new_key: new})

    def grep(self, id: str, pattern: str, path: Path) -> ToolCall:
        return self._call(id, "grep", {"pattern": pattern, "path": str(path), **self.vocabulary.grep_extra})

    def glob(self, id: str, pattern: str, path: Path) -> ToolCall:
        return self._call(id, "glob", {"pattern": pattern, "path": str(path)})

    def shell(self, id: str, command: str, timeout_s: float | None = None) -> ToolCall:
        timeout = {"timeout": int(timeout_s * 1000)} if timeout_s is not None else {}
        return self._call(id, "shell", {"command": command, **timeout})
