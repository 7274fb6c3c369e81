"""Where the sweep's job A leaves its canaries: the fixed places, how a shell writes one, and what became of each.

Each fixed place's directory is the one A's shell names, resolved there: srt, for one, gives the shell a
TMPDIR of its own choosing. The places A finds for itself are `discover.py`'s.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from boundary import canary, shared_defaults
from boundary.model import Script, ToolCall
from boundary.runners.contract import Job, Runner

# place -> its directory as A's shell names it: `.` (its working directory), `$VAR[/sub]`, or absolute
SHELL_PLACES = {
    "checkout_untracked": ".",
    "tmpdir": "$TMPDIR",
    "home": "$HOME",
    "data_home": "$XDG_DATA_HOME",
    "tmp": "/tmp",
    "var_tmp": "/var/tmp",
    "dev_shm": "/dev/shm",
    **{d.place: d.where for d in shared_defaults.SHARED_DEFAULTS},
}
FILE_PLACES = [*SHELL_PLACES, "checkout_committed", "write_tool"]
WROTE = "boundary-wrote"  # `boundary-wrote NAME`: the shell read its canary back (its view may be its own)
REFUSED = "boundary-refused"  # `boundary-refused NAME WHAT-THE-WRITE-SAID`: the canary could not be written there
SAID = "boundary-place"  # A's shell says where each place's directory is: `boundary-place NAME DIR` ("-": none)
NAMED_NONE = "-"
# Each shell sweep writes its findings to a file in B's checkout, read from outside in full: an agent shows the
# model only part of a long output (codex saves nothing aside), and a sweep's output on a busy host is long.
SWEEP_OUTPUT = ".boundary-sweep-output-"
PLANT_END = "boundary-plant-end"  # the last line of what a plant step said: it ran to its end
PLANT_S = 150.0  # a plant step's time, its discovery's walk of the whole view included
# What a writable file that was there gets: a line of its own, a comment in most configuration formats (git's, a
# shell's, npm's, TOML, YAML), so that a job's own tools still read the file while the canary is in it.
APPENDED = "\n# {token}\n"


@dataclass
class Place:
    name: str
    file: str  # the canary file's name in its directory
    token: str
    directory: str | None = None  # as A's shell resolved it ("-": it names none); None: A's shell never said
    held: bool = False  # the canary was there once planted, read from outside in the host the jobs run on
    wrote: bool = False  # the shell that wrote it read it back (a sandbox may give it a view of its own, e.g. /dev/shm)
    refused: str | None = None  # what the failed write said (its tool's result, or the shell's error); None: nothing
    how: str = ""  # a discovered place: how the shell found it (`env-VAR`, `home-SUB`, `walk`, `mount`)
    appended: bool = False  # a file that was there: the canary is a line appended to it (`APPENDED`), not a file

    @property
    def path(self) -> Path | None:
        return Path(self.directory) / self.file if self.directory not in (None, NAMED_NONE) else None

    @property
    def where(self) -> str:
        """The place as a report names it: the file a canary line was appended to, else the directory."""
        return str(self.path) if self.appended else str(self.directory)


def script(runner: Runner, id: str, text: str, timeout_s: float | None = None) -> ToolCall:
    """A shell script run as one simple command, as a hostile job would: Claude Code refuses a command it cannot
    check (loops, groups, variables), but not a script piped into bash. Compressed: Claude Code also refuses to run
    without asking a command of 10,000 characters or more, and the discovery made a plant step that long."""
    encoded = base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()
    return runner.agent.shell(id, f"printf %s {encoded} | base64 -d | gzip -dc | bash", timeout_s)


def places_of(job: Job) -> list[Place]:
    """Where A will write: the shell places' directories are left for A's shell to name; the checkout's are known."""
    places = [Place(name, f"boundary-sweep-{canary.new_canary()}", canary.new_canary()) for name in SHELL_PLACES]
    checkout = str(job.checkout)
    places.append(Place("checkout_committed", f"committed-{canary.new_canary()}.txt", canary.new_canary(), checkout))
    places.append(Place("write_tool", f"tool-{canary.new_canary()}.txt", canary.new_canary(), checkout))
    return places


def tool_places(places: list[Place], env: dict[str, str]) -> list[Place]:
    """A canary of its own for A's write tool in each host-wide place, where the job's environment says it is: an
    agent's file tools run outside the shell's sandbox (Claude Code's Write, opencode's tools in the agent's
    process), and a runner may let them write where the shell may not (the real `/tmp` beside the shell's own)."""
    planted = []
    for place in places:
        where = SHELL_PLACES.get(place.name, ".")
        directory = host_directory(where, env) if where != "." else None
        if directory:
            token = canary.new_canary()
            planted.append(Place(place.name, f"boundary-tool-{canary.new_canary()}", token, directory, how=TOOL))
    return planted


TOOL = "write tool"  # how a tool place was planted: by A's write tool, at a path the harness named


def host_directory(where: str, env: dict[str, str]) -> str | None:
    """A place's directory as the job's environment names it (None: the variable is unset or empty)."""
    if not where.startswith("$"):
        return where
    variable, _, sub = where[1:].partition("/")
    value = env.get(variable)
    return f"{value}/{sub}" if value and sub else value or None


def shell_directory(where: str) -> str:
    """The shell's own word for a place's directory: its working directory, an absolute one, or what its
    environment names (empty when the variable is unset or empty, never `/`)."""
    if where == ".":
        return '"$PWD"'
    if not where.startswith("$"):
        return shlex.quote(where)
    variable, _, sub = where[1:].partition("/")
    return f'"${{{variable}:+${variable}{"/" + sub if sub else ""}}}"'


def write_line(name: str, token: str, path: str, append: bool = False) -> str:
    """Write the canary (`append`: as a line of a file that is there, `APPENDED`); say what the write said when it
    failed (a sandbox's refusal, or anything else). `name` and `token` may be shell words that expand (a discovered
    place's, in a loop)."""
    line = shlex.quote(APPENDED.format(token="%s").replace("\n", "\\n")) if append else "'%s\\n'"
    write = f"e=$({{ printf {line} {token} {'>>' if append else '>'} {path}; }} 2>&1)"
    wrote = f'{{ grep -qF {token} {path} 2>/dev/null && echo "{WROTE} {name}" >&2; }}'  # stdout says where
    return f"{write} && {wrote} || echo \"{REFUSED} {name} $(printf %s \"$e\" | tr '\\n' ' ')\""


def plant_line(place: Place) -> str:
    """Name the place's directory as A's shell sees it, say it, and write the canary there."""
    directory = SHELL_PLACES[place.name]
    write = write_line(place.name, place.token, f'"$d"/{shlex.quote(place.file)}')
    said = f'echo "{SAID} {place.name} ${{d:-{NAMED_NONE}}}"'
    return f'd={shell_directory(directory)}; {said}; [ -z "$d" ] || {{ {write}; }}'


def plant_steps(
    runner: Runner, script_: Script, places: list[Place], prefix: str, checkout: Path, discover: str = ""
) -> None:
    """Every canary written: through the write tool, then through the shell (committed too), then in each place
    the shell finds it may write (`discover`: discover.py's lines)."""
    agent = runner.agent
    lines = [plant_line(p) for p in places if p.name in SHELL_PLACES]
    committed = next(p for p in places if p.name == "checkout_committed")
    lines.append(write_line(committed.name, committed.token, shlex.quote(str(committed.path))))
    commit = f"git -c user.name=a -c user.email=a@a -c core.hooksPath=/dev/null add {shlex.quote(str(committed.path))}"
    commit += " && git -c user.name=a -c user.email=a@a -c core.hooksPath=/dev/null commit -q -m sweep"
    # stderr joined to stdout: an agent's shell tool may keep back what a sandboxed command says there. What it says
    # goes to a file the harness reads whole, with an end line: a call that returns early shows only its beginning.
    plant = "\n".join(["exec 2>&1", *lines, f"{{ {commit}; }} 2>/dev/null", discover]) + "\necho planted\n"
    said = said_file(prefix)
    plant = f"{{\n{plant}}} > {said} 2>&1\necho {PLANT_END} >> {said}\ncat {said}\n"
    tool = next(p for p in places if p.name == "write_tool")
    write_id = f"{prefix}-write-tool"
    written = agent.write(write_id, tool.path, tool.token + "\n") if tool.path else agent.shell(write_id, "true")
    planting = script(runner, f"{prefix}-plant", plant, timeout_s=PLANT_S)
    # One step for both where they may run at once (a round trip less before the search): their places differ.
    if written.tool in agent.serial_tools:
        script_.add_step(written)
        script_.add_step(planting)
    else:
        script_.add_step(written, planting)
    wait_for(runner, script_, f"{prefix}-plant-wait", PLANT_S, checkout, {said: PLANT_END})


def said_file(prefix: str) -> str:
    """Where a job's plant step writes what it says, in its checkout (a sweep's output name: no sweep reads it)."""
    return f"{SWEEP_OUTPUT}plant-{prefix}"


def wait_for(
    runner: Runner, script_: Script, prefix: str, total_s: float, checkout: Path, ends: dict[str, str]
) -> None:
    """Where the agent's shell call returns before its command ends (codex's exec_command yields after 30 s, the
    command running on), more calls that wait, for `total_s` in all, until each file of `ends` (in the job's
    checkout) holds its end line: the job must not go on (or end) while what it started still runs. The harness
    reads the same files from outside: a call due once they all hold their lines is never asked for."""
    limit = runner.agent.call_yields_after_s
    if limit is None:
        return
    condition = " && ".join(f"grep -qx {line} {name} 2>/dev/null" for name, line in ends.items())
    wait = f"until {condition}; do sleep 0.2; done; echo waited"
    for index in range(2, math.ceil(total_s / limit) + 1):
        script_.add_step(script(runner, f"{prefix}-{index}", wait, timeout_s=limit), unless=ended(checkout, ends))


def ended(checkout: Path, ends: dict[str, str]) -> Callable[[dict[str, str]], bool]:
    """The harness's look at what a job's shell writes last: each file of `ends` holds its line as a line of its
    own."""

    def holds(name: str, line: str) -> bool:
        try:
            return line in (checkout / name).read_text(errors="replace").splitlines()
        except OSError:
            return False

    return lambda _results: all(holds(name, line) for name, line in ends.items())


def resolve(places: list[Place], said: str, write_tool: str = "") -> None:
    """Each shell place's directory, as the shell named it; what each failed write said."""
    named = dict(re.findall(rf"{SAID} (\S+) (.+)", said))
    refused = dict(re.findall(rf"{REFUSED} (\S+) ?(.*)", said))
    wrote = set(re.findall(rf"{WROTE} (\S+)", said))
    for place in places:
        if place.name in SHELL_PLACES and place.name in named:
            place.directory = named[place.name].strip()
        place.wrote = place.wrote or place.name in wrote
        if place.name in refused:
            place.refused = refused[place.name].strip()
        if place.name == "write_tool" and write_tool:
            place.refused = write_tool  # used only if the canary is not there


def with_held(place: Place, root: Path) -> Place:
    """Held: the harness reads the canary there, or the shell that wrote it read it back (in a view of its own)."""
    return dataclasses.replace(place, held=place.wrote or holds(place, root))


def in_host(path: Path, root: Path) -> Path | None:
    """The path as the harness reaches it in the host whose `/` is `root` (None: not absolute, so nowhere)."""
    return root / path.relative_to("/") if path.is_absolute() else None


def holds(place: Place, root: Path) -> bool:
    """A's canary is there, read in the host the jobs run on (its /tmp is not the harness's in a container)."""
    path = in_host(place.path, root) if place.path else None
    try:
        return path is not None and place.token.encode() in path.read_bytes()
    except OSError:
        return False


def clean(places: list[Place], root: Path) -> None:
    """What A may have left outside its job's directories (the host's /tmp, /var/tmp, /dev/shm, /tmp/claude, and
    every place it found it may write)."""
    for place in places:
        if place.name in SHELL_PLACES or place.how:
            remove_canary(place, root)


def remove_canary(place: Place, root: Path) -> Path | None:
    """The place's canary gone from the host whose `/` is `root`: its file removed, or its line cut from the file
    it was appended to (written in place: a file bound into a sandbox keeps its inode). The path, if there was one
    to remove; a file without the place's canary is left as it is (it is not the sweep's)."""
    path = in_host(place.path, root) if place.path else None
    try:
        if path is None or place.token.encode() not in (content := path.read_bytes()):
            return None
        if not place.appended:
            path.unlink()
            return path
        line = APPENDED.format(token=place.token).encode()
        with path.open("r+b") as file:
            file.write(content.replace(line, b"", 1))
            file.truncate()
    except OSError:
        return None
    return path
