"""The sessions scenario's CLI cell: job B's shell asks the agent's own CLI for job A's session.

opencode keeps every session of an account in one database (the reference runners point `OPENCODE_DB` at it),
and keys a project by the repository's root commit, so two checkouts of one repository share a session list.
Its CLI reads that database: `opencode session list` run in B's checkout lists the project's sessions, and
`opencode export <id>` prints one whole. A job's shell inherits the agent's environment, so the same CLI run
from B's shell reads whatever database B's agent uses — if the shell can read it at all.

The cell runs, in one shell call of job B (after A ran): the CLI's version (it runs there at all), the session
list, and an export of each of A's session ids (what A's agent named in its request headers). Judged on that
call's result:
- A's canary in it (an export gave A's session) or one of A's session ids in the list: LEAKED;
- B's own session listed and none of A's: the CLI reads B's sessions and A's are not among them (DENIED, n/a);
- the list failed: DENIED only if the shell's own read of the database file (which the harness sees there) is
  refused in a layer's words, else INCONCLUSIVE with what the CLI said.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from boundary import canary
from boundary.model import Script
from boundary.runners.contract import Runner
from boundary.scenarios.base import Cell
from boundary.text import excerpt, plain
from boundary.toolchain import tools
from boundary.verdict import Evidence, Finding, Proof, Verdict, denied, judge

CLI_CELL: Cell = ("job_a_canaries", "session_cli")
CALL = "session-cli"
AGENTS = frozenset({"opencode"})  # Claude Code and codex take a session up only through a model turn
SECTIONS = ("version", "list", "export", "database")
# Where opencode 1.18.33 keeps sessions: OPENCODE_DB if set, else its data directory's opencode.db.
DATABASE = '"${OPENCODE_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/opencode/opencode.db}"'


def cli_executable(agent: str, argv: list[str]) -> str:
    """The agent's executable as the job runs it (an argv element named after it), else the pinned one."""
    named = [part for part in argv if Path(part).name == agent]
    return named[0] if named else str(tools.executable(agent))


def cli_command(executable: str, theirs_ids: list[str]) -> str:
    """One shell command: a section per question, each headed `== <name>` so that the judge reads them apart."""
    cli = shlex.quote(executable)
    lines = [
        f"echo '== version'; {cli} --version 2>&1 | head -c 300",
        f"echo '== list'; {cli} session list --format json 2>&1 | head -c 20000",
        # Why the CLI could not read its sessions, in the OS's words: the database file, read directly.
        f'echo \'== database\'; db={DATABASE}; echo "$db"; wc -c -- "$db" 2>&1',
    ]
    for session_id in theirs_ids:  # the canary, if an export holds it, is all the judge needs of a whole session
        exported = f"{cli} export {shlex.quote(session_id)} 2>&1"
        lines.append(f"echo '== export'; out=$({exported}); printf '%s\\n' \"$out\" | head -c 1500; echo")
        found = f"grep -o -E '{canary.PREFIX}[0-9a-f]+' | sort -u | head -50"
        lines.append(f"printf '%s\\n' \"$out\" | {found}")
    return "\n".join(lines)


def cli_script(runner: Runner, argv: list[str], theirs_ids: list[str]) -> Script:
    script = Script(final_text="done")
    command = cli_command(cli_executable(runner.agent.name, argv), theirs_ids)
    script.add_step(runner.agent.shell(CALL, command, timeout_s=120))
    return script


def sections(result: str) -> dict[str, str]:
    """What each section of the command printed (the export sections joined)."""
    found: dict[str, list[str]] = {name: [] for name in SECTIONS}
    current: list[str] | None = None
    for line in result.splitlines():
        if line.startswith("== ") and line[3:].strip() in found:
            current = found[line[3:].strip()]
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in found.items()}


def cli_finding(
    result: str | None,
    exists: Callable[[Path], bool],
    theirs: str,
    theirs_ids: list[str],
    own_ids: list[str],
    denials: dict[str, tuple[str, ...]],
    problems: list[str],
) -> Finding:
    """LEAKED on A's canary or session id; DENIED only with B's own session listed or a layer's refusal."""
    if result is not None and theirs in result:
        return Finding(Verdict.LEAKED, "none", f"job B's shell exported job A's session with the agent's CLI: {theirs}")
    said = sections(plain(result or ""))
    listed = [session_id for session_id in theirs_ids if session_id in said["list"]]
    if listed:
        detail = f"job B's shell listed job A's session {listed[0]} with the agent's CLI (`session list`)"
        return Finding(Verdict.LEAKED, "none", detail)
    if result is None:
        return Finding(Verdict.INCONCLUSIVE, "", "the agent's CLI call in job B's shell never answered")
    if not theirs_ids:
        return Finding(Verdict.INCONCLUSIVE, "", "job A's agent named no session id in its requests: nothing to ask")
    if problems:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(problems))
    if not any(ch.isdigit() for ch in said["version"]):
        detail = f"the agent's CLI did not run in job B's shell (`--version` said {excerpt(said['version'])!r})"
        return Finding(Verdict.INCONCLUSIVE, "", detail)
    if any(session_id in said["list"] for session_id in own_ids):
        detail = (
            f"B's shell lists its own sessions, none of A's {len(theirs_ids)}; export said {excerpt(said['export'])}"
        )
        return denied(Proof.CONTROLLED, "n/a", detail)
    return _refused(said, exists, denials)


def _refused(said: dict[str, str], exists: Callable[[Path], bool], denials: dict[str, tuple[str, ...]]) -> Finding:
    """The CLI listed nothing of B's: a layer refused only if reading the database it names was refused in that
    layer's words while the harness sees the file there."""
    named, _, read = said["database"].partition("\n")
    if not named.startswith("/") or not exists(Path(named)):
        detail = f"the CLI's database {named!r} is not there seen from outside; its list said {excerpt(said['list'])}"
        return Finding(Verdict.INCONCLUSIVE, "", detail)
    found = judge(Evidence([], read, None, None, []), denials)
    return replace(found, detail=f"{found.detail}; the CLI's list said {excerpt(said['list'], 100)}")
