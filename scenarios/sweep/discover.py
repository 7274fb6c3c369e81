"""Where else job A may write: its shell finds every such place, plants a canary in each, and one cell per file
channel judges them all (issue 16, item 13).

The shell lists, as it sees them: each directory or file its environment names (any variable whose value is an
existing absolute path: TMPDIR, HOME, XDG_*, npm_config_cache, PIP_CACHE_DIR, CARGO_HOME, GOPATH, GOCACHE,
GIT_CONFIG_GLOBAL, …), the caches a home keeps by default (~/.cache, ~/.npm, ~/.local/share, …), every highest
writable directory of a walk of its view and every writable file in a directory it may not write (`/proc`, `/sys`
and `/dev` left out, but `/dev/shm`; `/dev/mqueue` holds queues, not files: the sweep's `ipc/posix_mqueue` cell tries
it; read-only mounts left out: nothing under one is writable through it), and the same of each writable mount in
`/proc/self/mountinfo` (a sandbox may bind a shared directory, or one shared file, inside a private or read-only
tree). In a directory it plants a canary file; to a file (one git config for every job of an account) it appends a
canary line, which the harness cuts out again once B has searched. What the fixed places of `places.py` already
cover is not planted twice; nothing is planted under the host's `/run`, and no more than CAP places: each one left
is named, and the cell cannot pass with it.

Job B does the same in its own view: its canaries are the controls. A place of A's not found is DENIED only when
B's own canary in the same place (the same variable, or the same path but for the job's name) was found by the same
search, or B's shell was refused A's canary there in words a layer declares.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from boundary import canary
from boundary.runners.contract import Runner
from boundary.scenarios.sweep.places import SHELL_PLACES, SWEEP_OUTPUT, Place, shell_directory, write_line
from boundary.verdict import UNRECOGNISED, Finding, Proof, Verdict, denied, recognise_layer

DISCOVERED = "discovered_places"  # the cell's row
CAP = 64  # places planted at most: a shell with more to write names the rest as not planted
ROOTS = f"{SWEEP_OUTPUT}roots"  # in the checkout: each discovered directory, for the job's own sweep to start from
WRITABLE = "boundary-writable"  # `boundary-writable HOW DIR`: a place the shell may write (the fixed ones too)
FOUND = "boundary-discovered"  # `boundary-discovered NAME HOW DIR`: a place planted beyond the fixed ones
APPENDED_TO = "boundary-appended"  # `boundary-appended NAME HOW FILE`: a writable file, its canary a line appended
NOT_PLANTED = "boundary-not-planted"  # `boundary-not-planted DIR WHY`
ENDED = "boundary-discovery-end"
# The caches and data a home keeps where no variable names them: package managers' and XDG's defaults.
HOME_DEFAULTS = (".cache", ".config", ".local/share", ".local/state", ".npm", ".cargo", "go", ".m2", ".gradle")
# Never walked: the kernel's trees, the host's /run (walked on its own, never planted in), and every read-only mount
# (`$ro`: nothing under one is writable through it; a writable mount inside one is walked from its own mount point).
PRUNED = r'\( -path /proc -o -path /sys -o -path /dev -o -path /run "${ro[@]}" \) -prune -o'
# What a walk lists: each highest writable directory (what is under it is its), and each writable file in a
# directory that is not (a file the sandbox binds writable, one writable file in a read-only tree).
HIGHEST = "-type d -writable -print -prune -o -type f -writable -print"
# A file is a place of its own when it is a mount (bound writable) or its directory is not writable; in a writable
# directory, that directory is the place (and no program the environment names, `$_` or `$SHELL`, is touched).
# {fixed}: the fixed places' directories. The n-th place's file name and canary are derived from {seed} (`derived`):
# 64 of each spelled out made a command longer than Claude Code takes. Few processes per place: on 2 cores each fork
# of a loop over a sandbox's hundreds of mounts cost the plant step (on the jobs' critical path) seconds.
DISCOVER = r""": > {roots}
declare -A listed seen; for x in {fixed}; do [ -n "$x" ] && x=$(readlink -f -- "$x") && seen[$x]=1; done
boundary_mounts() {{ awk '{{o[$5]=$6}} END {{for (m in o) print (o[m] ~ /(^|,)ro(,|$)/ ? "ro" : "rw"), m}}' \
{mounts} 2>/dev/null; }}
ro=(); rw=(); while read -r how m; do printf -v m '%b' "${{m//\\/\\0}}"
if [ "$how" = ro ]; then m=${{m//\\/\\\\}}; m=${{m//\*/\\*}}; m=${{m//\?/\\?}}; m=${{m//\[/\\[}}; ro+=(-o -path "$m")
else case $m in /proc|/proc/*|/sys|/sys/*) ;; /dev/shm|/dev/shm/*) rw+=("$m");; /dev|/dev/*) ;; *) rw+=("$m");; esac; fi
done < <(boundary_mounts)
boundary_candidates() {{
for v in $(compgen -e); do x=${{!v}}; case $x in /*) [ -e "$x" ] && printf 'env-%s %s\n' "$v" "$x";; esac; done
for s in {home}; do [ -n "$HOME" ] && [ -d "$HOME/$s" ] && printf 'home-%s %s\n' "$s" "$HOME/$s"; done
find {top} "$PWD" ${{TMPDIR:+"$TMPDIR"}} ${{HOME:+"$HOME"}} {pruned} {highest} 2>/dev/null | sed 's/^/walk /'
find /run /dev/shm -type d -writable -print -prune 2>/dev/null | sed 's/^/walk /'
[ ${{#rw[@]}} -eq 0 ] || find "${{rw[@]}}" {pruned} {highest} 2>/dev/null | sed 's/^/mount /'
}}
i=0
boundary_candidates | while read -r how x; do
r=$(readlink -f -- "$x" 2>/dev/null); [ -n "$r" ] && {{ [ -d "$r" ] || [ -f "$r" ]; }} && [ -w "$r" ] || continue
[ -d "$r" ] || [ "$how" = mount ] || [ ! -w "${{r%/*}}" ] || continue
[ -n "${{listed[$r]}}" ] || {{ echo "{writable} $how $r"; listed[$r]=1; }}
[ -n "${{seen[$r]}}" ] && continue
seen[$r]=1
case $r in /run|/run/*) case " {host_run} " in *" $(stat -c %d -- "$r" 2>/dev/null) "*)
echo "{not_planted} $r (/run is the host's: nothing is planted there)"; continue;; esac;; esac
[ "$i" -lt {cap} ] || {{ echo "{not_planted} $r (over the cap of {cap} places)"; continue; }}
n=discovered-$i; h=$(printf '%s-%s' {seed} "$i" | sha256sum); f=boundary-sweep-${{h:0:20}}; t=BOUNDARY-${{h:20:20}}
printf '%s\n' "$r" >> {roots}
if [ -f "$r" ]; then echo "{found_file} $n $how $r"; {append}; else echo "{found} $n $how $r"; {write}; fi
i=$((i+1))
done
echo {ended}"""


@dataclass
class Discovery:
    """What a job's shell found it may write, and where it planted."""

    places: list[Place]  # made beforehand; the shell hands each a directory in turn (those left keep none)
    seed: str = ""  # what each place's file name and canary derive from
    writable: list[tuple[str, str]] = field(default_factory=list)  # (how, directory): the fixed places' too
    not_planted: list[str] = field(default_factory=list)  # "DIR (why)"
    ended: bool = False

    @property
    def planted(self) -> list[Place]:
        return [p for p in self.places if p.directory is not None]


def new_discovery() -> Discovery:
    """The places a fresh seed names, none yet with a directory."""
    seed = secrets.token_hex(16)
    return Discovery([Place(f"discovered-{i}", *derived(seed, i)) for i in range(CAP)], seed)


def derived(seed: str, index: int) -> tuple[str, str]:
    """The n-th place's file name and canary, as the shell derives them from the seed (a canary's form, but the
    file's name is no canary: B's read of the path must not show one)."""
    digest = hashlib.sha256(f"{seed}-{index}".encode()).hexdigest()
    return f"boundary-sweep-{digest[:20]}", f"{canary.PREFIX}{digest[20:40]}"


def discover_lines(discovery: Discovery, top: str = "/", mounts: str = "/proc/self/mountinfo") -> str:
    """The shell lines that find each place and plant the next canary there, saying so (`top` and `mounts`: where
    the walk starts and the mount table it reads, for a test to keep it in a directory of its own)."""
    return DISCOVER.format(
        top=shlex.quote(top),
        mounts=shlex.quote(mounts),
        seed=discovery.seed,
        roots=ROOTS,
        fixed=" ".join(shell_directory(w) for w in SHELL_PLACES.values()),
        home=" ".join(HOME_DEFAULTS),
        pruned=PRUNED,
        highest=HIGHEST,
        writable=WRITABLE,
        not_planted=NOT_PLANTED,
        cap=CAP,
        found=FOUND,
        write=write_line("$n", '"$t"', '"$r/$f"'),
        found_file=APPENDED_TO,
        append=write_line("$n", '"$t"', '"$r"', append=True),
        ended=ENDED,
        host_run=" ".join(str(device) for device in host_run_devices()),
    )


def host_run_devices() -> list[int]:
    """The devices of the host's /run and every file system mounted under it: a job's /run on one of them is the
    host's, never planted in; a /run of the sandbox's own (a container's tmpfs) is a place like any other."""
    devices = [os.stat("/run").st_dev]  # a mount of its own, or (as on some hosts) a directory of the root's
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point == "/run" or point.startswith("/run/"):
            with contextlib.suppress(OSError):
                devices.append(os.stat(point).st_dev)
    return sorted(set(devices))


def read_discovery(discovery: Discovery, said: str) -> None:
    """Each place's directory and how it was found, as the shell said (its writes are `places.resolve`'s)."""
    by_name = {p.name: p for p in discovery.places}
    for name, how, directory in re.findall(rf"^{FOUND} (\S+) (\S+) (.+)$", said, re.MULTILINE):
        if name in by_name:
            by_name[name].directory, by_name[name].how = directory.strip(), how
    for name, how, file in re.findall(rf"^{APPENDED_TO} (\S+) (\S+) (.+)$", said, re.MULTILINE):
        if name in by_name:
            path = Path(file.strip())
            by_name[name].directory, by_name[name].file, by_name[name].how = str(path.parent), path.name, how
            by_name[name].appended = True
    discovery.writable = re.findall(rf"^{WRITABLE} (\S+) (.+)$", said, re.MULTILINE)
    discovery.not_planted = re.findall(rf"^{NOT_PLANTED} (.+)$", said, re.MULTILINE)
    discovery.ended = ENDED in said.splitlines()


def key(place: Place, job: str) -> str:
    """The same place in another job's view: the variable or home default that names it, or its path but for the
    job's own name."""
    if place.how.startswith(("env-", "home-")):
        return place.how
    return f"{place.how}:{(place.directory or '').replace(job, '<job>')}"


def inventory(discovery: Discovery) -> str:
    """Every place the shell said it may write, for the detail (and the closing note) to quote."""
    writable = ", ".join(f"{directory} ({how})" for how, directory in discovery.writable) or "none listed"
    skipped = f"; not planted: {', '.join(discovery.not_planted)}" if discovery.not_planted else ""
    return f"job A may write: {writable}{skipped}"


@dataclass
class Sides:
    """Both jobs' discoveries, and what A's control needs: its checkout, which its search must list."""

    a: Discovery
    b: Discovery
    checkout: str = ""
    names: tuple[str, str] = ("", "")  # the jobs' names, A's then B's


def judge_discovered(
    channel: str,
    result: str,
    direct: dict[str, str],
    sides: Sides,
    control: str | None,
    problems: list[str],
    runner: Runner,
) -> Finding:
    """The places A found it may write, beyond the fixed ones, searched by one channel. `direct`: what B got
    reading each of A's canaries, by place name (the shell's exact read, or a tool's whole search: a refusal in it
    names its layer, as for the fixed places)."""
    listed = inventory(sides.a)
    found = [(p, [line for line in result.splitlines() if p.token in line]) for p in sides.a.planted]
    found = [(p, lines) for p, lines in found if lines]
    if found:
        where = "; ".join(f"{p.where} (found by {p.how}): {lines[0][:200]}" for p, lines in found)
        return Finding(Verdict.LEAKED, "none", f"job A's canaries found where else it may write: {where}. {listed}")
    why = [*problems, *_unproven(sides.a, sides.checkout)]
    proofs: list[tuple[str | None, str]] = []
    if not why:
        proofs = [_unfound(p, channel, result, direct.get(p.name, ""), sides, control, runner) for p in sides.a.planted]
        why = [w for w, _ in proofs if w]
    if why:
        return Finding(Verdict.INCONCLUSIVE, "", f"{'; '.join(why)}. {listed}")
    shown = sorted({proof for _, proof in proofs})
    layers = {proof.rpartition("(")[2].rstrip(")") for proof in shown if proof.startswith("refused")}
    layer = layers.pop() if len(layers) == 1 and all(p.startswith("refused") for p in shown) else "n/a"
    detail = f"none of job A's canaries in the {len(proofs)} places it found beyond the fixed ones"
    proof = Proof.REFUSED if layer != "n/a" else Proof.CONTROLLED  # each place refused, or B's own canary found
    return denied(proof, layer, f"{detail}{': ' if shown else ''}{'; '.join(shown)}. {listed}")


def _unproven(a: Discovery, checkout: str) -> list[str]:
    """Why A's search cannot be trusted to have found every place: it did not end, it missed its own checkout (its
    control), or it left places unplanted."""
    if not a.ended:
        return ["job A's search for places it may write did not run to its end (no end line; see its transcript)"]
    why = []
    inside = [d for _, d in a.writable if checkout == d or checkout.startswith(d.rstrip("/") + "/")]
    if checkout and not inside:
        why.append(f"control failed: job A's search for places it may write did not list its own checkout {checkout}")
    if a.not_planted:
        why.append(f"job A may write {len(a.not_planted)} places the sweep did not plant in (unproven)")
    return why


def _unfound(
    place: Place, channel: str, result: str, direct: str, sides: Sides, control: str | None, runner: Runner
) -> tuple[str | None, str]:
    """Why A's canary not found there proves nothing (None), and else what proves the place is not shared."""
    if not place.held:
        if place.refused is None:
            return f"job A's canary is not at {place.path}, and its write never reported", ""
        layer = recognise_layer(place.refused, runner.denials)
        if layer == UNRECOGNISED:
            return f"job A could not write {place.path}, and no layer's text explains why: {place.refused[:120]!r}", ""
        return None, f"refused to job A's write ({layer})"
    layer = recognise_layer(direct, runner.denials) if direct else UNRECOGNISED
    if layer != UNRECOGNISED:
        return None, f"refused to {channel} ({layer})"
    a_name, b_name = sides.names
    same = [o for o in sides.b.planted if o.held and key(o, b_name) == key(place, a_name)]
    if same:
        if any(o.token in result for o in same):
            return None, f"job B's own canary in the same place found by {channel}"
        return f"control failed: {channel} did not find job B's own canary at {same[0].path}, where A's is", ""
    missed = _own_missed(result, sides.b, control)
    if missed:
        return f"not found at {place.path} ({place.how}), and nothing shows why: {missed}", ""
    return None, f"searched by {channel}, which found every canary of job B's own"


def _own_missed(result: str, own: Discovery, control: str | None) -> str | None:
    """The channel's control for a place B has no counterpart of: its own file, and every canary B planted where
    it found it may write, found by the same search."""
    if control:
        return control
    if not own.ended:
        return "job B's own search for places it may write did not run to its end"
    missed = [str(p.path) for p in own.planted if p.held and p.token not in result]
    return f"control failed: job B's own canaries at {', '.join(missed)} were not found" if missed else None
