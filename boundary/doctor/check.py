"""One doctor check's result, and how a check runs a command: a missing command or a hang is a result, not an error."""

from __future__ import annotations

from dataclasses import dataclass

from boundary import proc
from boundary.text import excerpt

TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Check:
    name: str  # e.g. "bwrap namespaces"
    ok: bool
    detail: str  # what was seen
    fix: str = ""  # exact fix when not ok (one line, a command where possible)
    info: bool = False  # a property of this machine, reported and never a problem (ok is True)


@dataclass(frozen=True)
class Ran:
    code: int | None  # None: not found or timed out (detail says which)
    stdout: str
    stderr: str


def run(argv: list[str], what: str, timeout: float | None = None) -> Ran:
    """Run argv (found on the current PATH) through proc.run: a missing command or a hang is a result here."""
    try:
        done = proc.run(argv, timeout=timeout or TIMEOUT_S, what=what)
    except OSError as error:
        return Ran(None, "", f"{argv[0]}: {error.strerror}")
    except proc.ProcTimeout as error:  # the check's fix already names the command to run by hand
        return Ran(None, error.tail, f"timed out after {error.timeout_s:g} s, so its process group was killed")
    return Ran(done.returncode, done.stdout, done.stderr)


def first_line(text: str) -> str:
    return excerpt(next((line for line in text.splitlines() if line.strip()), "no output"))
