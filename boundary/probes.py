"""Targets × channels -> scripted tool calls, and the evidence each probe leaves."""

from __future__ import annotations

import base64
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from boundary import canary
from boundary.agents.opencode import OpenCode
from boundary.model.script import ToolCall


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

    def presence(self) -> str | None:
        """None if the target is on disk holding its canary (checked from outside the job)."""
        try:
            data = self.path.read_bytes()
        except OSError as error:
            return f"target {self.name} was not there when probed: {error}"
        if self.content.encode() not in data:
            return f"target {self.name} at {self.path} no longer holds its canary"
        return None


@dataclass(frozen=True)
class Channel:
    """One way to try. A listing channel reveals names, the others contents."""

    name: str
    listing: bool
    make: Callable[[OpenCode, str, Path], ToolCall]  # (agent, call id, path) -> call

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


def _cat(path_expression: str) -> str:
    """cat the file, keeping only canary-shaped strings: a large or binary file (a database) fits the reply whole."""
    return f"cat {path_expression} | grep -a -o -E '{canary.PATTERN}'"


CHANNELS: list[Channel] = [
    Channel("read", False, lambda a, i, p: a.read(i, p)),
    Channel("read_symlink", False, lambda a, i, p: a.read(i, p)),  # p is the link in the job's checkout
    Channel("read_relative", False, lambda a, i, p: a.read(i, p)),  # p is relative to the checkout: ../job-a/…
    Channel("grep", False, lambda a, i, p: a.grep(i, canary.PATTERN, p)),
    Channel("glob", True, lambda a, i, p: a.glob(i, "*", p)),
    Channel("shell_cat", False, lambda a, i, p: a.shell(i, _cat(shlex.quote(str(p))))),
    Channel("shell_cat_computed", False, lambda a, i, p: a.shell(i, _cat(_computed(p)))),
    Channel("shell_ls", True, lambda a, i, p: a.shell(i, f"ls -la {shlex.quote(str(p))}")),
]
# Each target, and whether its file name is secret (then listing channels apply too).
TARGETS = {
    "saved_output": True,
    "planted_tool_output": True,
    "shell_capture": True,
    "checkout_file": True,
    "account_db": False,
}
MATRIX = [(target, ch.name) for target, named in TARGETS.items() for ch in CHANNELS if named or not ch.listing]


@dataclass(frozen=True)
class Probe:
    """One scripted call: a channel used on a target (or, for a control, the job's own file)."""

    channel: Channel
    target: Target
    call: ToolCall
    path: Path  # the path the call names
    supplied: str  # text the probe itself gave the agent: canaries inside it are not leaks

    def leaked(self, result: str | None) -> list[str]:
        return canary.found(self.target.tokens, result or "", self.supplied)


def make_probe(agent: OpenCode, channel: Channel, target: Target, path: Path, prefix: str) -> Probe:
    probe_path = channel.probe_path(path)
    call = channel.make(agent, f"{prefix}-{channel.name}-{target.name}", probe_path)
    supplied = f"{probe_path} {probe_path.readlink()}" if probe_path.is_symlink() else str(probe_path)
    return Probe(channel, target, call, probe_path, supplied)


def control_problem(probe: Probe, result: str | None) -> str | None:
    """None if the control got the job's own canary back through its channel."""
    if result is None:
        return f"control for {probe.channel.name} never ran: no result reached the model server"
    expected = probe.channel.expected_token(probe.target)
    if expected not in result:
        flat = " ".join(result.split())[:160]
        return f"control failed: {probe.channel.name} on the job's own file did not return its canary (got: {flat})"
    return None
