"""The reach scenario's listing by the shell alone: `shell_discovered` where no interpreter runs.

A sandbox may stop interpreters (Python, Node) and not the shell: the Python client's discovery (`client.py`) then
never runs, yet bash still reads /proc/net/unix and /proc/net/tcp{,6} and walks the file system. So the same shell
call, after the other programs' tries (`programs.py`, whose `reach_errno`, `reach_bash` and `reach_curl` it uses) and
before the Python client, lists them itself with bash builtins and coreutils, bounded as the client is; opens its own
listener of each kind first (socat's or Node's, whichever here can), so a listing that cannot see it says so; and
tries each place it lists with each program here that speaks its kind: bash's /dev/tcp (TCP), curl and Node (TCP and
unix sockets). Its lines are the client's, each label under `shell:`:

- `shell:own-tcp`, `shell:own-unix`: `listed`, `unlisted`, or `error <stage> <ERRNO>` (the programs' own words in
  `shell:own-<kind>:why`);
- `shell:<program>:found:<kind>:<where>`: one try; `shell:found:unix:<path> named untried …` where no program here
  speaks unix sockets; a try Node never printed, `error run <its words>`;
- `shell:cut named …`: the listing or its tries cut short (what was not tried must not read as not there);
- `REACH shell:done`, last.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from boundary.reach.client import FIND_SOCKETS, MAX_FOUND
from boundary.reach.judge import Attempt, finished, first
from boundary.reach.programs import AT_ONCE, locate, node_code

OWN_PORT = 4098  # the shell's own TCP listener (the Python client's is OWN_PORT + 1, opened after this one closed)
OWN_SOCKET = ".boundary-reach-shell.sock"  # in the job's checkout
FIND_S = 30  # the file system walked within this, or the listing is cut
TRY_S = 30  # every place listed tried within this (Node's, meanwhile, within as long), or the cut is said
DONE = "REACH shell:done"
KINDS = ("tcp", "unix")
# A try's label: the Python client's `found:<kind>:<where>`, or the shell's, under `shell:` and the program's name.
TRY = re.compile(r"^(?:shell:(?:(bash|curl|node):)?)?(found:\S+)$")


def where(label: str) -> str | None:
    """`found:<kind>:<where>` of a try's label, whoever tried (None: the label is no try)."""
    match = TRY.match(label)
    return match.group(2) if match else None


def tried_by(label: str) -> str:
    """Who made a try: `python`, a program's name, or `shell` (a place the shell listed and had nothing to try)."""
    match = TRY.match(label)
    program = match.group(1) if match else None
    return program or ("shell" if label.startswith("shell:") else "python")


@dataclass(frozen=True)
class Listing:
    """One listing's lines: who made it, whether it began and ended, why it is not whole, its own listeners."""

    who: str
    started: bool
    ended: bool
    cut: str | None
    own: dict[str, Attempt | None]


def listings(attempts: list[Attempt], result: str) -> list[Listing]:
    """The Python client's listing and the shell's, as their lines say."""
    find = first(attempts, "discover:find")  # the walk did not run or finish: no socket it missed is out of view
    python_cut = first(attempts, "discover:cut") or find
    shell_cut = [a.detail for a in attempts if a.label == "shell:cut"]
    return [
        Listing(
            "the Python client",
            any(a.label.startswith("discover:own-") for a in attempts),
            finished(result),
            python_cut.text if python_cut else None,
            {kind: first(attempts, f"discover:own-{kind}") for kind in KINDS},
        ),
        Listing(
            "the shell",
            any(a.label.startswith("shell:own-") for a in attempts),
            any(line.strip() == DONE for line in result.splitlines()),
            "; ".join(shell_cut) or None,
            {kind: first(attempts, f"shell:own-{kind}") for kind in KINDS},
        ),
    ]


def script(skip: dict[str, Any], cap: int = MAX_FOUND, find: list[str] = FIND_SOCKETS) -> str:
    """The shell lines that list and try (after `programs.script`'s, whose functions they call; never exits);
    `find`: the walk for sockets (the client's, but in tests)."""
    setup = [
        "reach_tcp=(); reach_unix=(); reach_node_args=(); reach_pids=(); reach_cut=",
        "declare -A reach_seen=() reach_why=() reach_up=()",
        f'reach_own_unix=$PWD/{OWN_SOCKET}; rm -f "$reach_own_unix"',
    ]
    for name in ("socat", "curl", "node"):
        setup += [*locate(name), f"reach_{name}_at=$found"]
    run = ["reach_listen tcp", "reach_listen unix", "reach_list", "reach_own tcp", "reach_own unix"]
    run += ['[ -n "$reach_cut" ] && echo "REACH shell:cut named $reach_cut"', "reach_try_all"]
    run += ['[ ${#reach_pids[@]} = 0 ] || { kill "${reach_pids[@]}"; wait "${reach_pids[@]}"; } 2>/dev/null']
    run += ['rm -f "$reach_own_unix"']
    functions = [*_address(), *_list(find), *_listen(), *_skipped(skip), *_tries(skip, cap), *_node()]
    return "\n".join([*functions, *setup, *run, f"echo '{DONE}'", ""])


def _address() -> list[str]:
    return [
        "reach_ip() {  # a /proc/net/tcp{,6} address (hex words in host order) as inet_ntop prints it, in REPLY",
        "  local h=$1 i w g s=",
        "  if [ ${#h} = 8 ]; then",
        "    REPLY=$((16#${h:6:2})).$((16#${h:4:2})).$((16#${h:2:2})).$((16#${h:0:2})); return",
        "  fi",
        "  for i in 0 8 16 24; do w=${h:i:8}; printf -v g ':%x:%x' 0x${w:6:2}${w:4:2} 0x${w:2:2}${w:0:2}; s+=$g; done",
        "  s+=:  # the longest run of zero groups, first, becomes ::",
        "  for g in :0:0:0:0:0:0:0:0: :0:0:0:0:0:0:0: :0:0:0:0:0:0: :0:0:0:0:0: :0:0:0:0: :0:0:0: :0:0:; do",
        '    [[ $s == *"$g"* ]] && s=${s/"$g"/::} && break',
        "  done",
        "  [[ $s == ::* ]] || s=${s#:}; [[ $s == *:: ]] || s=${s%:}; REPLY=$s",
        "}",
        "reach_add() {  # LIST ITEM: ITEM appended to the array LIST, once",
        "  local -n into=$1",
        '  [ -n "$2" ] && [ -z "${reach_seen[$1 $2]}" ] && reach_seen[$1 $2]=1 && into+=("$2")',
        "  return 0",
        "}",
    ]


def _list(find: list[str]) -> list[str]:
    """`reach_list`: every TCP listener (`ADDRESS PORT`) and unix socket in the job's view; `reach_cut` if not all."""
    return [
        "reach_list() {",
        "  local table _sl here _ st _rest path said rc",
        "  for table in /proc/net/tcp /proc/net/tcp6; do",
        '    [ -r "$table" ] || { echo "REACH shell:$table error read UNREADABLE"; continue; }',
        "    while read -r _sl here _ st _rest; do",
        '      [ "$st" = 0A ] && reach_ip "${here%:*}" && reach_add reach_tcp "$REPLY $((16#${here#*:}))"',
        '    done <"$table"',
        "  done",
        f"  said=$(timeout {FIND_S} {shlex.join(find)} 2>/dev/null); rc=$?",
        f'  [ $rc = 124 ] && reach_cut="find / did not finish within {FIND_S} s"',
        '  [ $rc -gt 124 ] && reach_cut="find / could not run (exit $rc)"',
        '  while IFS= read -r path; do reach_add reach_unix "$path"; done <<<"$said"',
        '  [ -r /proc/net/unix ] || { echo "REACH shell:/proc/net/unix error read UNREADABLE"; return; }',
        '  { read -r _; while read -r _ _ _ _ _ _ _ path; do reach_add reach_unix "$path"; done; } </proc/net/unix',
        "}",
    ]


def _listen() -> list[str]:
    """`reach_listen KIND`: the shell's own listener, by socat or else Node (being listed is its whole control);
    `reach_own KIND`: whether the listing shows it, or why there is none."""
    port = f"{OWN_PORT:04X}"
    serve = "require('net').createServer((c) => c.destroy()).listen"
    return [
        "reach_spawn() {  # KIND PROGRAM PATH: the program, as the listener",
        "  case $1:$2 in",
        f'    tcp:socat) exec "$3" TCP4-LISTEN:{OWN_PORT},bind=127.0.0.1,reuseaddr,fork /dev/null ;;',
        '    unix:socat) exec "$3" "UNIX-LISTEN:$reach_own_unix,fork" /dev/null ;;',
        f'    tcp:node) exec "$3" -e "{serve}({OWN_PORT}, \'127.0.0.1\')" ;;',
        f'    unix:node) exec "$3" -e "{serve}(process.argv[1])" "$reach_own_unix" ;;',
        "  esac",
        "}",
        "reach_is_up() {",
        f'  if [ "$1" = tcp ]; then [[ $(</proc/net/tcp) == *":{port} 00000000:0000 0A "* ]] 2>/dev/null',
        '  else [ -S "$reach_own_unix" ]; fi',
        "}",
        "reach_listen() {",
        "  local kind=$1 prog at pid i err=$PWD/.boundary-reach-shell.err",
        "  for prog in socat node; do",
        '    at=$reach_socat_at; [ $prog = node ] && at=$reach_node_at; [ -n "$at" ] || continue',
        '    reach_spawn "$kind" $prog "$at" </dev/null >/dev/null 2>"$err" & pid=$!',
        '    for i in {1..30}; do reach_is_up "$kind" && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done',
        '    if kill -0 $pid 2>/dev/null; then reach_pids+=($pid); reach_up[$kind]=1; rm -f "$err"; return; fi',
        '    wait $pid; reach_why[$kind]+="$prog: $(<"$err") "',
        "  done",
        '  rm -f "$err"',
        "}",
        "reach_own() {",
        "  local kind=$1 parts words code stage=listen",
        '  if [ -n "${reach_up[$kind]}" ]; then',
        f'    [ $kind = tcp ] && set -- "reach_tcp 127.0.0.1 {OWN_PORT}" || set -- "reach_unix $reach_own_unix"',
        '    [ -n "${reach_seen[$1]}" ] && echo "REACH shell:own-$kind listed" ||',
        '      echo "REACH shell:own-$kind unlisted"',
        "    return",
        "  fi",
        "  IFS=$' \\t\\r\\n' read -r -d '' -a parts <<<\"${reach_why[$kind]:-no socat nor node here}\"",
        '  words=${parts[*]}; code=$(reach_errno "$words"); [[ $words == *" socket("* ]] && stage=socket',
        '  echo "REACH shell:own-$kind error $stage ${code:-NOLISTENER}"',
        '  echo "REACH shell:own-$kind:why named ${words:0:300}"',
        "}",
    ]


def _skipped(skip: dict[str, Any]) -> list[str]:
    """`reach_skipped PATH`: the harness's own sockets and other harness runs' (as the client's `skipped`)."""
    arms = [f"    {shlex.quote(path)}) return 0 ;;" for path in skip["paths"]]
    arms += [f"    {shlex.quote(skip['own'])}*) return 1 ;;"]
    arms += [f"    {shlex.quote(under)}*) return 0 ;;" for under in skip["under"]]
    return ["reach_skipped() {", "  case $1 in", *arms, "  esac", "  return 1", "}"]


def _tries(skip: dict[str, Any], cap: int) -> list[str]:
    """`reach_try_all`: each place listed (but the shell's own and the harness's), the first `cap` of them: Node's
    tries in the background, bash's and curl's meanwhile within TRY_S (a place that never answers costs each its
    whole timeout)."""
    ports = "|".join(f'*" {port}"' for port in [*skip["ports"], OWN_PORT])
    return [
        "reach_place() {  # ENTRY: `tcp ADDRESS PORT` or `unix PATH` as KIND LABEL HOST PORT PATH, in reach_at",
        "  local host",
        "  case $1 in",
        "    tcp\\ *) set -- ${1#tcp }; host=$1",
        "      case $host in 0.0.0.0) host=127.0.0.1 ;; ::) host=::1 ;; esac  # every address, reached on loopback",
        '      reach_at=(tcp "found:tcp:$1:$2" "$host" "$2" \'\') ;;',
        "    *) reach_at=(unix \"found:unix:${1#unix }\" '' '' \"${1#unix }\") ;;",
        "  esac",
        "}",
        "reach_try() {  # KIND LABEL HOST PORT PATH: bash (TCP) and curl try the place",
        '  [ "$1" = tcp ] && found=$BASH && reach_bash "shell:bash:$2" "$3" "$4"',
        '  [ -n "$reach_curl_at" ] && found=$reach_curl_at && reach_curl "shell:curl:$2" "$3" "$4" "$5"',
        '  [ "$1" = tcp ] || [ -n "$reach_curl_at$reach_node_at" ] ||',
        '    echo "REACH shell:$2 named untried: no curl nor node here"',
        "}",
        "reach_try_all() {",
        "  local places=() batch=() entry tried=0 deadline fd",
        '  for entry in "${reach_unix[@]}"; do',
        '    [ "$entry" = "$reach_own_unix" ] || reach_skipped "$entry" || places+=("unix $entry")',
        "  done",
        f'  for entry in "${{reach_tcp[@]}}"; do case $entry in {ports}) ;; *) places+=("tcp $entry") ;; esac; done',
        f'  [ ${{#places[@]}} -gt {cap} ] && echo "REACH shell:cut named tried {cap} of ${{#places[@]}}"',
        f'  places=("${{places[@]:0:{cap}}}")',
        '  for entry in "${places[@]}"; do',
        '    reach_place "$entry"',
        '    [ -n "$reach_node_at" ] && reach_node_args+=("shell:node:${reach_at[1]}" "${reach_at[@]:2}")',
        "  done",
        "  exec {fd}< <(reach_node_all)",
        f"  deadline=$((SECONDS + {TRY_S}))",
        '  for entry in "${places[@]}"; do',
        '    [ $SECONDS -gt $deadline ] && echo "REACH shell:cut named tried $tried of ${#places[@]}" && break',
        '    reach_place "$entry"; reach_try "${reach_at[@]}" & batch+=($!); tried=$((tried + 1))',
        f'    [ ${{#batch[@]}} -lt {AT_ONCE} ] || {{ wait "${{batch[@]}}"; batch=(); }}',
        "  done",
        '  [ ${#batch[@]} = 0 ] || wait "${batch[@]}"  # never a bare `wait`: the own listeners do not end',
        '  cat <&"$fd"; exec {fd}<&-',
        "}",
    ]


def _node() -> list[str]:
    """`reach_node_all`: Node's tries in one process; each it did not print is said, in its words (a guard's)."""
    code = shlex.quote(node_code("REACH shell:node:done"))
    return [
        "reach_node_all() {",
        "  local said rc i line rest=",
        "  [ ${#reach_node_args[@]} -gt 0 ] || return 0",
        f'  said=$(timeout {TRY_S} "$reach_node_at" -e {code} "${{reach_node_args[@]}}" </dev/null 2>&1); rc=$?',
        "  printf '%s\\n' \"$said\"",
        f'  [ $rc = 124 ] && echo "REACH shell:cut named Node did not end its tries within {TRY_S} s"',
        '  while IFS= read -r line; do [[ $line == "REACH "* ]] || rest+="$line "; done <<<"$said"',
        "  for ((i = 0; i < ${#reach_node_args[@]}; i += 4)); do",
        '    [[ $said == *"REACH ${reach_node_args[i]} "* ]] ||',
        '      echo "REACH ${reach_node_args[i]} error run Node exited $rc: ${rest:0:200}"',
        "  done",
        "}",
    ]
