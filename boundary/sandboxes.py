"""OS sandboxes for a job's shell: srt, and passthrough (a control that confines nothing).

A runner confines the agent's shell by pointing `SHELL` at a wrapper; the
agent runs `$SHELL -c CMD` and the wrapper hands CMD to the sandbox.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Protocol

from boundary import shared_defaults
from boundary.toolchain import tools

OS_DENIALS = (
    "No such file or directory",
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "Not a directory",  # srt binds /dev/null over a denied path that does not exist yet…
    "File exists",  # …so creating a directory there fails this way
    "No such device or address",  # /dev/tty of a shell the sandbox started in a session of its own
)


@dataclass(frozen=True)
class ShellPolicy:
    """What the shell may see and change."""

    deny_read: list[Path]
    allow_read: list[Path]
    allow_write: list[Path]
    allowed_domains: list[str] = field(default_factory=list)
    deny_write: list[Path] = field(default_factory=list)  # inside allow_write: still not writable


class Sandbox(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def startup_failures(self) -> tuple[str, ...]: ...  # texts that show the sandbox never ran the command

    def wrapper(self, policy: ShellPolicy, workdir: Path) -> str:
        """The text of an executable `$SHELL` wrapper; files it needs go in workdir."""
        ...

    def version(self) -> str: ...

    def tmpdir_problem(self, tmpdir: Path) -> str | None:
        """Why the sandbox cannot run with this TMPDIR, or None."""
        ...


def _wrapper(*lines: str) -> str:
    """Runs the lines (the last one execs the sandbox) when called as `$SHELL -c CMD`."""
    body = "\n  ".join(lines)
    return f"""#!/bin/sh
# boundary shell wrapper: the agent runs `$SHELL -c CMD`.
if [ "$1" = "-c" ] && [ $# -eq 2 ]; then
  export SHELL=/bin/bash
  {body}
fi
if [ "$1" = "-l" ] && [ "$2" = "-c" ] && [ $# -eq 3 ]; then exec "$0" -c "$3"; fi
echo "boundary shell wrapper: expected '-c CMD', got: $*" >&2
exit 126
"""


UNIX_PATH_MAX = 107  # sizeof(sun_path) - 1


class Srt:
    name: ClassVar[str] = "srt"
    startup_failures: ClassVar[tuple[str, ...]] = (
        "bwrap: ",
        "Sandbox dependencies",
        "srt: ",
        "Failed to create bridge sockets",
    )

    def settings(self, policy: ShellPolicy) -> dict[str, object]:
        return {
            "network": {"allowedDomains": policy.allowed_domains, "deniedDomains": []},
            "filesystem": {
                "denyRead": [str(p) for p in policy.deny_read],
                "allowRead": [str(p) for p in policy.allow_read],
                "allowWrite": [str(p) for p in policy.allow_write],
                "denyWrite": [*(str(p) for p in policy.deny_write), *self.unshared_writes()],
            },
        }

    def unshared_writes(self) -> list[str]:
        """What srt lets every sandbox write whatever the policy says, once it exists (/tmp/claude, two directories
        in HOME: boundary/shared_defaults.py): one job would leave there what the next reads. A denied path that
        does not exist stays absent (srt 0.0.83 makes nothing there)."""
        return shared_defaults.srt_spellings()

    def own_tmpdir(self) -> list[str]:
        """srt gives the shell TMPDIR=/tmp/claude, which every sandbox shares, unless CLAUDE_CODE_TMPDIR names
        another: the job's own TMPDIR, which the policy lets it write. Without one, the shell does not start."""
        missing = "boundary shell wrapper: no TMPDIR: srt would give the shell the /tmp/claude every job shares"
        return [f'[ -n "$TMPDIR" ] || {{ echo "{missing}" >&2; exit 126; }}', 'export CLAUDE_CODE_TMPDIR="$TMPDIR"']

    def wrapper(self, policy: ShellPolicy, workdir: Path) -> str:
        settings = workdir / "srt-settings.json"
        settings.write_text(json.dumps(self.settings(policy), indent=2))
        # The Node the doctor checked against srt's `engines`, not whichever `node` PATH finds first.
        srt = shlex.join([str(tools.node()), str(tools.executable("srt"))])
        return _wrapper(*self.own_tmpdir(), f'exec {srt} --settings {shlex.quote(str(settings))} -c "$2"')

    def version(self) -> str:
        return tools.version("srt")

    def tmpdir_problem(self, tmpdir: Path) -> str | None:
        """srt bridges its proxies through Unix sockets named $TMPDIR/claude-socks-<16 hex>.sock; a path over
        the kernel's 107 bytes cannot be bound, and every shell call fails ("Failed to create bridge sockets")."""
        length = len(os.fsencode(tmpdir)) + len("/claude-socks-0123456789abcdef.sock")
        if length <= UNIX_PATH_MAX:
            return None
        return (
            f"srt's bridge socket under TMPDIR={tmpdir} would be {length} bytes, over the {UNIX_PATH_MAX} a Unix "
            "socket path may have: every sandboxed shell call would fail. Give the job a shorter TMPDIR"
        )


class Passthrough:
    """Confines nothing: the control that proves the harness notices (incident 4)."""

    name: ClassVar[str] = "passthrough"
    startup_failures: ClassVar[tuple[str, ...]] = ()

    def wrapper(self, policy: ShellPolicy, workdir: Path) -> str:
        return _wrapper('exec /bin/bash -c "$2"')

    def version(self) -> str:
        return "none"

    def tmpdir_problem(self, tmpdir: Path) -> str | None:
        return None


@dataclass(frozen=True)
class AgentSandbox:
    """An agent's own sandbox: the runner sets it in the agent's settings, not through a `$SHELL` wrapper."""

    name: str  # also the agent's command, whose version is the sandbox's
    agent: str  # the agent, as the sandbox's version names it
    set_in: str  # where the runner configures it
    startup_failures: tuple[str, ...]
    srt_sockets: bool = False  # its sandbox-runtime bridges its proxies through sockets in TMPDIR, as srt does

    def wrapper(self, policy: ShellPolicy, workdir: Path) -> str:
        raise ValueError(f"{self.name}'s sandbox is set in {self.set_in}, not by a shell wrapper")

    def version(self) -> str:
        return f"{self.agent} {tools.version(self.name)}"

    def tmpdir_problem(self, tmpdir: Path) -> str | None:
        # Otherwise none: codex needs CODEX_HOME outside TMPDIR, which the runner checks (it knows both).
        return Srt().tmpdir_problem(tmpdir) if self.srt_sockets else None


# Claude Code's own sandbox (sandbox-runtime inside the agent).
CLAUDE_SANDBOX = AgentSandbox(
    name="claude",
    agent="Claude Code",
    set_in="its settings (sandbox.enabled)",
    startup_failures=("bwrap: ", "Sandbox dependencies", "sandbox is unavailable"),
    srt_sockets=True,
)
# codex's own sandbox (bwrap, with a permission profile in its config).
CODEX_SANDBOX = AgentSandbox(
    name="codex",
    agent="codex",
    set_in="its config (a permission profile)",
    startup_failures=("bwrap: ", "fs sandbox helper failed", "Sandbox expected"),
)

SANDBOXES: dict[str, Callable[[], Sandbox]] = {
    "srt": Srt,
    "passthrough": Passthrough,
    "claude": lambda: CLAUDE_SANDBOX,  # frozen: one serves every runner
    "codex": lambda: CODEX_SANDBOX,
}


# What boundary knows of a sandbox a runner's `describe` names: the texts that show it never ran the command. A
# name not here is still run, with the runner's own startup_failures alone (the doctor checks what any sandbox needs).
STARTUP_FAILURES: dict[str, tuple[str, ...]] = {
    "srt": Srt.startup_failures,
    "claude": CLAUDE_SANDBOX.startup_failures,
    "codex": CODEX_SANDBOX.startup_failures,
    "bwrap": ("bwrap: ",),  # bubblewrap prefixes every error of its own set-up
    "passthrough": (),
    "none": (),
}


def get_sandbox(name: str) -> Sandbox:
    try:
        return SANDBOXES[name]()
    except KeyError:
        raise ValueError(f"unknown sandbox {name!r}; expected one of: {', '.join(SANDBOXES)}") from None
