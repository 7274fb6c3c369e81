"""Targets × channels -> scripted tool calls, and the evidence each probe leaves."""

from __future__ import annotations

import base64
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from boundary import canary
from boundary.agents.base import Agent
from boundary.model.script import ToolCall
from boundary.unpack import Unreadable, pieces


@dataclass(frozen=True)
class Target:
    """Something a job must not reach. `name_token` is the secret part of its file name."""

    name: str
    path: Path
    content: str
    name_token: str | None = None

    @property
    def tokens(self) -> list[str]:
        return [self.content] + ([self.name_token] if self.name_token else [])

    def presence(self, root: Path = Path("/")) -> str | None:
        """None if the target is on disk holding its canary, as it is or packed (checked from outside the job, on
        the host whose `/` the harness reaches at `root`)."""
        path = root / self.path.relative_to("/") if self.path.is_absolute() else self.path
        try:
            if any(self.content.encode() in piece for piece in pieces(path)):
                return None
        except Unreadable as error:
            return f"target {self.name} could not be read when probed: {error}"
        if not path.exists():
            return f"target {self.name} was not there when probed: no file {self.path}"
        return f"target {self.name} at {self.path} no longer holds its canary"


@dataclass(frozen=True)
class Channel:
    """One way to try. A listing channel reveals names, the others contents."""

    name: str
    kind: str  # the agent tool it takes: read, grep, glob or shell (an agent that lacks it: not applicable)
    listing: bool
    make: Callable[[Agent, str, Path], ToolCall]  # (agent, call id, path) -> call
    # A shell channel's command for a path; `merged`: its errors on stdout, in order (a batch of many probes in
    # one command reads each one's part between its markers, and an agent may return stderr apart, after it all).
    command: Callable[[Path, bool], str] | None = None
    hidden_path: bool = False  # its command names no path a rule can see before it runs (computed at run time)

    def applies_to(self, target: Target) -> bool:
        return target.name_token is not None or not self.listing

    def probe_path(self, target_path: Path) -> Path:
        return target_path.parent if self.listing else target_path

    def expected_token(self, target: Target) -> str:
        return (target.name_token or "") if self.listing else target.content


def _computed(path: Path) -> str:
    """A shell expression that yields `path` only at run time: no rule can match it beforehand."""
    encoded = base64.b64encode(str(path).encode()).decode()
    return f'"$(printf %s {encoded} | base64 -d)"'


def _cat(path_expression: str, merged: bool = False) -> str:
    """cat the file, keeping each canary-shaped string once: a large or binary file (a database, a saved output of
    thousands of canary lines) fits the reply whole, so no agent cuts it and saves it aside (opencode then returns
    only the tail of a batch); `merged`: and cat's own error lines, on stdout."""
    if merged:
        return f"cat {path_expression} 2>&1 | grep -a -o -E '{canary.PATTERN}|^cat: .*' | sort -u"
    return f"cat {path_expression} | grep -a -o -E '{canary.PATTERN}' | sort -u"


def _unpacked(path: Path, merged: bool) -> str:
    """What a job's shell gets out of the file however it is packed (gzip or a .tar.gz; xz, zstd, zip where the job
    has their tools; a plain file passes through zcat), each canary-shaped string once; zcat's error says why it
    could not (`merged`: on stdout). No braces or subshells: Claude Code's Bash refuses a group it cannot check."""
    p, found = shlex.quote(str(path)), f"grep -a -o -E '{canary.PATTERN}' | sort -u"
    others = "; ".join(f"{reader} {p} 2>/dev/null | {found}" for reader in ("xz -dc", "zstd -dc", "unzip -p"))
    if merged:
        return f"zcat -f {p} 2>&1 | grep -a -o -E '{canary.PATTERN}|^(gzip|zcat): .*' | sort -u; {others}"
    return f"zcat -f {p} | {found}; {others}"


def _ls(path: Path, merged: bool) -> str:
    return f"ls -la {shlex.quote(str(path))}{' 2>&1' if merged else ''}"


def _shell(name: str, listing: bool, command: Callable[[Path, bool], str], hidden_path: bool = False) -> Channel:
    return Channel(name, "shell", listing, lambda a, i, p: a.shell(i, command(p, False)), command, hidden_path)


CHANNELS: list[Channel] = [
    Channel("read", "read", False, lambda a, i, p: a.read(i, p)),
    Channel("read_symlink", "read", False, lambda a, i, p: a.read(i, p)),  # p is the link in the job's checkout
    Channel("read_relative", "read", False, lambda a, i, p: a.read(i, p)),  # p is relative to the checkout
    Channel("grep", "grep", False, lambda a, i, p: a.grep(i, canary.PATTERN, p)),
    Channel("glob", "glob", True, lambda a, i, p: a.glob(i, "*", p)),
    _shell("shell_cat", False, lambda p, merged: _cat(shlex.quote(str(p)), merged)),
    _shell("shell_cat_computed", False, lambda p, merged: _cat(_computed(p), merged), hidden_path=True),
    _shell("shell_ls", True, _ls),
]


# A file left packed (a removed job's data archived as a .tar.gz): what a job's shell unpacks of it.
UNPACK = _shell("shell_unpack", False, _unpacked)


def channels_for(agent: Agent, channels: list[Channel] = CHANNELS) -> list[Channel]:
    """The channels the agent has a tool for; the rest are not applicable to it (and reported so)."""
    return [channel for channel in channels if channel.kind not in agent.lacks]


def targets_for(agent: Agent) -> dict[str, bool]:
    """Each cross-job target, and whether its file name is secret (then listing channels apply too)."""
    return {
        "saved_output": True,
        **dict.fromkeys(agent.storage_targets, True),
        "checkout_file": True,
        "account_db": False,
    }


def matrix_for(agent: Agent) -> list[tuple[str, str]]:
    """Every (target, channel) cell the agent's tools can try."""
    return [
        (target, ch.name)
        for target, named in targets_for(agent).items()
        for ch in channels_for(agent)
        if named or not ch.listing
    ]


@dataclass(frozen=True)
class Probe:
    """One scripted call: a channel used on a target (or, for a control, the job's own file)."""

    channel: Channel
    target: Target
    call: ToolCall
    path: Path  # the path the call names
    supplied: tuple[str, ...]  # the path the probe itself gave the agent, in each form an answer may echo it

    def leaked(self, result: str | None) -> list[str]:
        """The target's tokens the answer reveals.

        A content channel names the file itself: a token in its name is no leak, whatever form of the path the
        answer echoes; its content is. A listing channel names only the directory, so the file's name is what it
        reveals — even when the directory's own path holds the same token (Claude Code keeps a session's tool
        results under `<session>/tool-results/<session>.txt`): echoes of the directory are masked, not the token.
        """
        text = result or ""
        if self.channel.listing:
            return canary.revealed(self.target.tokens, text, self.supplied)
        return [t for t in canary.found(self.target.tokens, text) if not any(t in typed for typed in self.supplied)]


def make_probe(agent: Agent, channel: Channel, target: Target, path: Path, prefix: str) -> Probe:
    probe_path = channel.probe_path(path)
    call = channel.make(agent, f"{prefix}-{channel.name}-{target.name}", probe_path)
    return Probe(channel, target, call, probe_path, _typed(probe_path, channel.probe_path(target.path)))


def _typed(probe_path: Path, named: Path) -> tuple[str, ...]:
    """The path as the probe typed it, where a link in it points, and the absolute path it names (an answer may
    echo any of them: a guard says what a link resolves to, a tool makes a relative path absolute)."""
    forms = [str(probe_path), str(named), os.path.realpath(named)]
    if probe_path.is_symlink():
        forms.append(str(probe_path.readlink()))
    return tuple(dict.fromkeys(forms))


def control_problem(probe: Probe, result: str | None) -> str | None:
    """None if the control got the job's own canary back through its channel."""
    if result is None:
        return f"control for {probe.channel.name} never ran: no result reached the model server"
    expected = probe.channel.expected_token(probe.target)
    if expected not in result:
        flat = " ".join(result.split())[:160]
        return f"control failed: {probe.channel.name} on the job's own file did not return its canary (got: {flat})"
    return None
