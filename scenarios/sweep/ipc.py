"""The kernel's shared objects as a channel between jobs: System V shared memory and message queues, POSIX
message queues and abstract unix sockets (issue 16, item 13).

None of them is a file: a sandbox that hides every path of A's from B still lets them meet here unless it
gives each job its own IPC namespace (System V, POSIX queues) and network namespace (abstract sockets).
Each of A's objects carries a canary: a shm segment and a queue's message hold it; a POSIX queue's and an
abstract socket's name carry its random part, and a System V key is derived from it (`IpcTokens.mark`). No
name or status line holds a whole canary: the other sweeps, finding one in A's or B's files, would count it.

Wiring, for the sweep scenario (every text runs through its `_script`, piped into bash):
- A: `plant_lines(a, DONE_FLAG)` first in A's `a-wait` step, before its wait loop. One perl process makes
  A's objects, writes its status lines to `STATUS` in A's checkout (and to stdout), holds them until B's
  sweep ends (the done flag), then removes them: an object held by a process of the same tool call is not
  lost when the agent kills what a returned call left behind, nor with a sandbox's per-call namespaces.
  The harness waits for `wait_planted(A's checkout / STATUS)` before starting B.
- B: `search_lines(a, own)`, a step of B's sweep script: B makes its own objects the same way (the
  controls), lists what it can see (`/proc/sysvipc/*`, `/dev/mqueue`, `/proc/net/unix`), probes A's and
  its own by key and name, removes its own, and writes all to `OUTPUT` in B's checkout.
- Judge: `judge(a, own, IpcEvidence(...), runner.denials)` gives a Finding per cell of `cells()`.
  Optional: `verify(a, holder_pid(a))`, while A holds, says which of A's objects the harness sees from
  outside in the holder's namespaces (root only). Always, after the scenario: `clean([a, own], pod.pid)`.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path

from boundary import canary, proc
from boundary.scenarios.base import Cell
from boundary.verdict import UNRECOGNISED, Finding, Proof, Verdict, denied, recognise_layer

KINDS = ("sysv_shm", "sysv_msg", "posix_mqueue", "abstract_socket")
CHANNEL = "shell_sweep"
STATUS = ".boundary-ipc-status"  # A's holder's status lines, in A's checkout
OUTPUT = ".boundary-sweep-output-ipc"  # B's search's lines, in B's checkout
TAG = "boundary-ipc-"
PLANTED, RELEASED, SEARCH_END, GAVE_UP = (f"{TAG}{w}" for w in ("planted", "released", "search-end", "gave-up"))
HOLD_S = 600  # the holder's own limit: it never outlives a stuck scenario by much
NO_PERL = "no perl with IPC::SysV and Socket in the job's view; fix: install perl in the job's view"

# One perl program for every side: `plant` (A's objects, or B's own), `search`, `remove`. Tokens are passed as
# their hex part: a command line or a file holding the program never matches the canary pattern itself.
PERL = (Path(__file__).parent / "ipc.pl").read_text()


@dataclass(frozen=True)
class IpcTokens:
    """One job's canaries, one per kind of object."""

    sysv_shm: str
    sysv_msg: str
    posix_mqueue: str
    abstract_socket: str

    @classmethod
    def new(cls) -> IpcTokens:
        return cls(*(canary.new_canary() for _ in KINDS))

    def token(self, kind: str) -> str:
        return str(getattr(self, kind))

    def hexes(self) -> list[str]:
        """What the perl program is given: each token without its prefix (so no command line holds a canary)."""
        return [getattr(self, f.name).removeprefix(canary.PREFIX) for f in fields(self)]

    def mark(self, kind: str) -> str:
        """How a listing or a probe names the object: its System V key (derived from the token), or its name."""
        hex_part = self.token(kind).removeprefix(canary.PREFIX)
        return f"key=0x{0x40000000 | int(hex_part[:7], 16):08x}" if kind.startswith("sysv") else f"{TAG}{hex_part}"


@dataclass(frozen=True)
class IpcEvidence:
    """What the judge needs, all read from outside the jobs."""

    planted: str  # A's status lines (STATUS in A's checkout, read once A's job ended); '' if there were none
    search: str  # B's search's lines (OUTPUT in B's checkout); '' if there were none
    a_running: bool  # A's job was still running when B's search ended
    problems: list[str]  # both jobs' (crash, timeout, script errors)
    verified: frozenset[str] | None = None  # kinds of A's the harness saw in A's namespaces; None: not looked


def cells() -> list[Cell]:
    return [(f"ipc/{kind}", CHANNEL) for kind in KINDS]


def _perl(mode: str, args: list[str], failed: str) -> str:
    """The perl program run in `mode`; without perl, `failed` lines say so, each naming the fix."""
    check = "perl -MIPC::SysV -MSocket -e 1"
    run = shlex.join(["perl", "-e", PERL, mode, *args])
    return f'if {check} 2>/dev/null; then {run}; else e=$({check} 2>&1 | head -c 160 | tr "\\n" " "); {failed}; fi'


def _failed(prefix: str, end: str) -> str:
    lines = "; ".join(f'echo "{TAG}{prefix}failed {k} {NO_PERL} ($e)"' for k in KINDS)
    return f"{{ {lines}; echo {end}; }}"


def plant_lines(tokens: IpcTokens, done_flag: str, status: str = STATUS, hold_s: int = HOLD_S) -> str:
    """A's shell text: make its objects, say so (stdout and `status`), hold them until `done_flag` exists."""
    failed = f"{_failed('', PLANTED)} | tee -a {shlex.quote(status)}"
    return _perl("plant", [status, done_flag, str(hold_s), *tokens.hexes()], failed)


def search_lines(target: IpcTokens, own: IpcTokens, output: str = OUTPUT) -> str:
    """B's shell text: make its own objects, list and probe every kind, write all it saw to `output`."""
    run = _perl("search", ["-", "-", "0", *target.hexes(), *own.hexes()], _failed("own-", SEARCH_END))
    return f"{{ {run}; }} > {shlex.quote(output)} 2>&1"


def wait_planted(status: Path, timeout_s: float, running: Callable[[], bool]) -> str:
    """A's status lines once A's holder has made (or failed to make) every object, or what is there when job A is
    no longer `running` (nothing more will come: a floor run's empty script, a crash) or at the timeout."""

    def read() -> str:
        return status.read_text(errors="replace") if status.exists() else ""

    def planted() -> str | None:
        text = read()
        return text if PLANTED in text.splitlines() or not running() else None

    return proc.wait_until(planted, timeout_s) or read()


def _said(text: str, tag: str, kind: str) -> list[str]:
    """The rest of each line `boundary-ipc-TAG KIND …`."""
    prefix = f"{TAG}{tag} {kind} "
    return [line[len(prefix) :].strip() for line in text.splitlines() if line.startswith(prefix)]


def _reached(text: str, kind: str, tokens: IpcTokens) -> list[str]:
    """B's lines that show it reached the object: its canary read (listed or probed), or a queue opened or a
    socket connected by name. A name or key merely listed is metadata, not a way in: see `_named`."""
    mark, token = tokens.mark(kind), tokens.token(kind)
    read = [f"{tag} {kind} {rest}" for tag in ("seen", "direct") for rest in _said(text, tag, kind) if token in rest]
    opened = [f"direct {kind} {r}" for r in _said(text, "direct", kind) if r == f"{mark} found"]
    return read + (opened if kind in ("posix_mqueue", "abstract_socket") else [])


def _named(text: str, kind: str, tokens: IpcTokens) -> list[str]:
    """B's listing lines that name the object (its key or name) without reaching into it."""
    return [f"{kind} {rest}" for rest in _said(text, "seen", kind) if tokens.mark(kind) in rest]


def _refusal(text: str, kind: str, tokens: IpcTokens) -> str | None:
    """What refused B's probe of the object, when it was refused (it exists, or could not be asked)."""
    for rest in _said(text, "direct", kind):
        said = rest.removeprefix(f"{tokens.mark(kind)} ")
        if said.startswith(("exists ", "error ")) or "unreadable: " in said:
            return said
    return None


def judge(a: IpcTokens, own: IpcTokens, evidence: IpcEvidence, denials: dict[str, tuple[str, ...]]) -> list[Finding]:
    """One Finding per cell of `cells()`, in that order."""
    return [_judge_kind(kind, a, own, evidence, denials) for kind in KINDS]


def _judge_kind(
    kind: str, a: IpcTokens, own: IpcTokens, evidence: IpcEvidence, denials: dict[str, tuple[str, ...]]
) -> Finding:
    leaked = _reached(evidence.search, kind, a)
    if leaked:
        where = "; ".join(leaked[:3])
        return Finding(Verdict.LEAKED, "none", f"job B reached job A's {kind} ({a.mark(kind)}): {where}")
    why = list(evidence.problems)
    if SEARCH_END not in evidence.search.splitlines():
        why.append(f"job B's IPC search did not run to its end (no {SEARCH_END} line in {OUTPUT})")
    if not evidence.a_running:
        why.append("job A had ended before job B's search did: its objects may have gone with it")
    if why:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(why))
    if not _made(kind, evidence):
        return _not_made(kind, evidence.planted, denials)
    if RELEASED not in evidence.planted.splitlines() or GAVE_UP in evidence.planted:
        held = f"job A's holder did not say it held its {kind} until B's search ended (no {RELEASED} line)"
        return Finding(Verdict.INCONCLUSIVE, "", f"{held}: it was killed, timed out, or gave up")
    named = _named(evidence.search, kind, a)
    seen = f" (B saw its name: {named[0][:120]})" if named else ""
    refused = _refusal(evidence.search, kind, a)
    if refused is not None:
        layer = recognise_layer(refused, denials)
        if layer == UNRECOGNISED:
            why_text = f"job B's probe of A's {kind} failed, and no layer's text explains why: {refused[:160]!r}"
            return Finding(Verdict.INCONCLUSIVE, "", why_text)
        return denied(Proof.REFUSED, layer, f"job B's probe of A's {kind} was refused: {refused[:160]}{seen}")
    if not _reached(evidence.search, kind, own):
        said = [*_said(evidence.search, "own-refused", kind), *_said(evidence.search, "own-failed", kind)]
        detail = f"control failed: job B's search did not reach its own {kind} ({own.mark(kind)})"
        return Finding(Verdict.INCONCLUSIVE, "", f"{detail}{': ' + said[0][:200] if said else ''}")
    return denied(Proof.CONTROLLED, "n/a", f"job A's {kind} ({a.mark(kind)}) not in job B's view (B's own was){seen}")


def _made(kind: str, evidence: IpcEvidence) -> bool:
    """A's object was made: A's holder read it back, or the harness saw it in A's namespaces."""
    return bool(_said(evidence.planted, "wrote", kind)) or kind in (evidence.verified or ())


def _not_made(kind: str, planted_text: str, denials: dict[str, tuple[str, ...]]) -> Finding:
    """A's object is not there: DENIED only if A's own sandbox refused it, in words a layer declares."""
    failed = _said(planted_text, "failed", kind)
    refused = _said(planted_text, "refused", kind)
    if failed or not refused:
        why = failed[0] if failed else "its plant never reported (the step never ran, or the sandbox did not start)"
        return Finding(Verdict.INCONCLUSIVE, "", f"job A could not make its {kind}: {why}"[:300])
    layer = recognise_layer(refused[0], denials)
    if layer == UNRECOGNISED:
        why = f"job A could not make its {kind}, and no layer's text explains why: {refused[0]!r}"
        return Finding(Verdict.INCONCLUSIVE, "", why[:300])
    return denied(Proof.REFUSED, layer, f"job A's sandbox refused its {kind}: {refused[0][:160]}")


def holder_pid(tokens: IpcTokens) -> int | None:
    """A's holder, as the harness numbers it (its command line names it)."""
    name = f"boundary-ipc-holder {tokens.hexes()[0]}".encode()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if (entry / "cmdline").read_bytes().startswith(name):
                return int(entry.name)
        except OSError:
            continue
    return None


def _run(mode: str, args: list[str], pid: int | None, namespaces: tuple[str, ...]) -> str:
    """The perl program here, or in the IPC (and network) namespace of `pid`; '' when it cannot run."""
    enter = ["nsenter", "-t", str(pid), *namespaces] if pid is not None else []
    try:
        done = proc.run([*enter, "perl", "-e", PERL, mode, *args], timeout=20, what=f"the IPC {mode} from outside")
    except (OSError, proc.ProcTimeout):
        return ""
    return done.stdout


def verify(tokens: IpcTokens, pid: int | None) -> frozenset[str] | None:
    """Which of the objects the harness finds, probing from inside the namespaces of `pid` (A's holder)."""
    if pid is None or os.geteuid() != 0:
        return None
    out = _run("search", ["-", "-", "0", *tokens.hexes()], pid, ("--ipc", "--net"))
    if SEARCH_END not in out:
        return None
    return frozenset(k for k in KINDS if _reached(out, k, tokens))


def clean(every: Iterable[IpcTokens], pid: int | None = None) -> None:
    """Remove every job's objects, here or in the IPC namespace of `pid` (the pod's); whatever failed before."""
    hexes = [h for tokens in every for h in tokens.hexes()]
    _run("remove", ["-", "-", "0", *hexes], pid if pid is not None and os.geteuid() == 0 else None, ("--ipc",))
