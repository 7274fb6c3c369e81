"""The shell write channels' command lines, and reading each target's part back out of what the shell printed.

One line per target: a start marker, the write (a literal or a run-time-decoded path), an end marker with its
exit status, and what the shell then sees at the path. A marker counts at the start of a line only: a refusal
that quotes the command quotes `echo "@@…"`.
"""

from __future__ import annotations

import base64
import gzip
import re
import shlex
from pathlib import Path

SHELL_LINE = "@@boundary-write"
SHELL_START = "@@boundary-begin"
SHELL_VIEW = "@@boundary-view"  # what the shell saw of the directory and file it wrote: where its write went
MAX_COMMAND = 64 * 1024
GZIP_WORTH = 256  # characters of command a gzip'd payload must save to be worth its process
QUIET = "2>/dev/null "  # a command feeding a pipeline: its only error is the pipe closing (see _decoded)


def write_line(
    index: int | str, path: Path, content: str, computed: bool, append: bool = False, owned: bool = False
) -> str:
    """The shell line that writes `content` to target `index` at `path`, its path decoded at run time if
    `computed` (no rule can see it beforehand); `append`: after what is there (the job's own file, which takes
    every channel's marker in turn: one channel's write must not wipe out another's). A literal line makes the
    directory first (`mkdir -p`, which a rule on commands' path arguments sees: opencode refuses it outside the
    project); a computed one only where it does not exist yet (a command and a path decode less a target): where
    it does, a sandbox that hides it fails the write with "No such file or directory", which is its denial.
    `owned`: a file the job may own though it is read-only (git's objects are 0444): made writable first, as an
    attacker who owns it would."""
    place = _computed if computed else (lambda p: shlex.quote(str(p)))
    quoted = place(path)
    mkdir = "" if computed and path.parent.is_dir() else f"mkdir -p -- {place(path.parent)} 2>&1; "
    # No groups, subshells, nested quotes or `$?`: Claude Code refuses what it cannot check before it runs.
    # `2>&1` before `>`: a refused redirect says why on stdout, between this target's two markers.
    # Once it wrote, what the shell sees at the path: a write that "worked" while nothing changed outside went
    # somewhere else, and this shows where (another file system, a device bound over the path). Only then: a
    # process less a target where the write is refused (if `stat` fails, a second end marker follows: the first
    # one counts).
    view = f"stat -L -c '{SHELL_VIEW} {index} %d:%i %F' -- {quoted} 2>&1"
    end = f'echo "{SHELL_LINE} {index} rc=0" && {view} || echo "{SHELL_LINE} {index} rc=1"'
    redirect = ">>" if append else ">"
    writable = f"chmod u+w -- {quoted} 2>&1; " if owned else ""
    return f'echo "{SHELL_START} {index}"; {mkdir}{writable}{_decoded(content)} 2>&1 {redirect} {quoted} && {end}'


def _decoded(content: str) -> str:
    """A pipeline printing `content`: in base64, or gzip'd first where that makes the line much shorter (fewer
    commands for an agent that takes short ones: Claude Code's batches are a seventh of opencode's). Only its last
    command may print an error: where the redirect after it is refused, the commands feeding it write into a
    closed pipe, and where SIGPIPE is ignored (codex's shell) say so on stderr, a pipe of its own that the agent
    merges into stdout as it comes, in pieces: `base64: ` before a marker hides the marker."""
    plain = f"printf %s {base64.b64encode(content.encode()).decode()} {QUIET}| base64 -d"
    zipped = base64.b64encode(gzip.compress(content.encode(), mtime=0)).decode()
    packed = f"printf %s {zipped} {QUIET}| base64 -d {QUIET}| gzip -dc"
    return packed if len(packed) + GZIP_WORTH < len(plain) else plain


def _computed(path: Path) -> str:
    encoded = base64.b64encode(str(path).encode()).decode()
    return f'"$(printf %s {encoded} | base64 -d)"'


def shell_part(output: str, index: int) -> str | None:
    """This target's part of the shell channel's output: its exit status and what was printed between its
    markers; the whole output when no line of the command ran (it was refused outright, or its sandbox never
    started); None when the command ran but this target's end marker never came (cut short, still running)."""
    lines, prefix = [line.strip() for line in output.splitlines()], f"{SHELL_LINE} {index} "
    end = next((i for i, line in enumerate(lines) if line.startswith(prefix)), None)
    if end is None:
        return None if ran(output) else output
    start = next((i for i, line in enumerate(lines[:end]) if line == f"{SHELL_START} {index}"), end)
    return " ".join([lines[end][len(prefix) :], *lines[start + 1 : end]]).strip()


def ran(output: str) -> bool:
    """Some line of the command ran: a marker starts a line of its output."""
    return any(line.strip().startswith((f"{SHELL_START} ", f"{SHELL_LINE} ")) for line in output.splitlines())


def view(output: str, index: int) -> tuple[tuple[int, int], str] | None:
    """What the shell saw at target `index`'s path once it had written: ((device, inode), kind)."""
    match = re.search(rf"^\s*{SHELL_VIEW} {index} (\d+):(\d+) (.+?)\s*$", output, re.MULTILINE)
    return ((int(match[1]), int(match[2])), match[3]) if match else None
