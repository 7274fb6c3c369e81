"""The reach scenario's second program: bash's own `/dev/tcp`, run by the job's shell before the Python client.

A sandbox may stop one program and not another (a guard inside interpreters stops Python's sockets, not the
shell's): each TCP target is also tried by bash itself, so what bash reached is its own cell. It prints the Python
client's lines (`REACH bash:<name> answered <excerpt>` or `REACH bash:<name> error connect <ERRNO>`), the kernel's
words for a failed connect turned into errno names (no harness word can pass for a sandbox's refusal), then
`REACH bash:done`.
"""

from __future__ import annotations

import shlex

from boundary.reach.places import Place

LABEL = "bash:"
DONE = f"REACH {LABEL}done"
TIMEOUT_S = 3
# bash's words when a /dev/tcp connect fails (strerror), and the errno each stands for.
ERRNOS = {
    "Connection refused": "ECONNREFUSED",
    "Network is unreachable": "ENETUNREACH",
    "No route to host": "EHOSTUNREACH",
    "Cannot assign requested address": "EADDRNOTAVAIL",
    "Operation not permitted": "EPERM",
    "Permission denied": "EACCES",
    "timed out": "ETIMEDOUT",
}
# One GET, as the Python client sends it; "CONNECTED" first, so a page that says "Connection refused" is an answer.
GET = (
    '{ echo CONNECTED; printf "GET / HTTP/1.0\\r\\nHost: %s\\r\\nMetadata-Flavor: Google\\r\\n'
    'X-Boundary-Probe: 1\\r\\n\\r\\n" "$1" >&3; cat <&3; } 3<>"/dev/tcp/$1/$2"'
)


def script(targets: list[Place]) -> str:
    """The bash lines that try every served TCP target (ends with DONE; never exits the shell it runs in)."""
    cases = "".join(f"    *{shlex.quote(words)}*) code={code} ;;\n" for words, code in ERRNOS.items())
    lines = [
        "reach_bash() {",
        "  local said rc words code=",
        f'  said=$(timeout {TIMEOUT_S} bash -c {shlex.quote(GET)} _ "$2" "$3" 2>&1 </dev/null); rc=$?',
        "  IFS=$' \\t\\r\\n' read -r -d '' -a words <<<\"$said\"; said=${words[*]}  # as the Python client's",
        "  case $said in",
        '    CONNECTED*) said=${said#CONNECTED }; echo "REACH $1 answered ${said:0:1000}"; return ;;',
        cases.rstrip("\n"),
        "  esac",
        '  [ -z "$code" ] && [ "$rc" = 124 ] && code=ETIMEDOUT',
        '  echo "REACH $1 error connect ${code:-UNKNOWN ${said:0:200}}"',
        "}",
    ]
    for place in (p for p in targets if p.kind == "tcp" and p.absent is None):
        lines.append(f"reach_bash {LABEL}{place.name} {shlex.quote(place.address)} {place.port}")
    return "\n".join([*lines, f"echo '{DONE}'", ""])


def finished(result: str) -> bool:
    """Bash printed its last line: every try it meant to make is in the answer."""
    return any(line.strip() == DONE for line in result.splitlines())
