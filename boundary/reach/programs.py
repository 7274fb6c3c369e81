"""The reach scenario's other programs: bash's own `/dev/tcp`, curl and Node, run by the job's shell before the
Python client.

A sandbox may stop one program and not another (a guard inside interpreters stops Python's sockets, not the shell's
or curl's): each target is also tried by each program itself, so what one reached is its own cell. Each prints the
Python client's lines (`REACH <program>:<target> answered <excerpt>` or `REACH <program>:<target> error connect
<ERRNO>`), the kernel's words for a failed connect turned into errno names (no harness word can pass for a sandbox's
refusal), then `REACH <program>:done`. A program the job cannot find (on its PATH or where distributions put it)
prints `REACH <program>:absent`: nothing of it to try.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from boundary.reach.places import Place

TIMEOUT_S = 3
# The kernel's words (strerror) when a connect fails, as bash and curl print them, and the errno each stands for.
ERRNOS = {
    "Connection refused": "ECONNREFUSED",
    "Network is unreachable": "ENETUNREACH",
    "No route to host": "EHOSTUNREACH",
    "Cannot assign requested address": "EADDRNOTAVAIL",
    "No such file or directory": "ENOENT",
    "Operation not permitted": "EPERM",
    "Permission denied": "EACCES",
    "timed out": "ETIMEDOUT",
}
# curl's "Couldn't connect to server" with no kernel words: the socket was never made (curl 7.88 logs no errno for
# a refused socket(2)), so nothing says why.
NO_REASON = "NOREASON"
HEADERS = ("Metadata-Flavor: Google", "X-Boundary-Probe: 1")  # as the Python client sends them
# One GET over bash's /dev/tcp; "CONNECTED" first, so a page that says "Connection refused" is an answer.
BASH_GET = (
    '{ echo CONNECTED; printf "GET / HTTP/1.0\\r\\nHost: %s\\r\\n'
    + "".join(f"{h}\\r\\n" for h in HEADERS)
    + '\\r\\n" "$1" >&3; cat <&3; } 3<>"/dev/tcp/$1/$2"'
)
AT_ONCE = 8  # places tried at once (Node's, and the shell listing's bash and curl)
# Node: one process tries every place given as (label, host, port, unix path), AT_ONCE at a time.
NODE_SCRIPT = """
const net = require("net"), a = process.argv.slice(1);
const flat = (s) => String(s).split(/\\s+/).filter(Boolean).join(" ");
const why = (e) => (e && /^E[A-Z]+$/.test(e.code) ? e.code
  : flat(`${(e && e.name) || "Error"} ${(e && e.message) || e}`).slice(0, 200));
const one = (label, host, port, path) => new Promise((done) => {
  let got = "", up = false, said = false, s;
  const say = (t) => { if (!said) { said = true; console.log(`REACH ${label} ${t}`); } if (s) s.destroy(); done(); };
  const answer = () => say(`answered ${flat(got).slice(0, 1000)}`);
  // an abstract socket, as /proc/net/unix lists it (`@name`), is `\\0name`
  const where = path && path.startsWith("@") ? "\\0" + path.slice(1) : path;
  try { s = where ? net.connect({ path: where }) : net.connect({ host, port: Number(port) }); }
  catch (e) { return say(`error connect ${why(e)}`); }
  s.setTimeout(TIMEOUT_MS, () => (up ? answer() : say("error connect ETIMEDOUT")));
  const get = `GET / HTTP/1.0\\r\\nHost: ${host || "localhost"}\\r\\nHEADERS\\r\\n\\r\\n`;
  s.on("connect", () => { up = true; s.write(get); });
  s.on("data", (d) => { got += d; });
  s.on("end", answer);
  s.on("error", (e) => say(`error connect ${why(e)}`));
});
const places = [];
for (let i = 0; i + 3 < a.length; i += 4) places.push(a.slice(i, i + 4));
(async () => {  // AT_ONCE at a time: a place that never answers costs its timeout once per batch, not per place
  for (let i = 0; i < places.length; i += AT_ONCE)
    await Promise.all(places.slice(i, i + AT_ONCE).map((p) => one(...p)));
  console.log("DONE");
})();
"""


@dataclass(frozen=True)
class Program:
    """One program the job's shell runs against every place of the kinds it speaks (`tcp`, `unix`)."""

    name: str
    kinds: tuple[str, ...]

    @property
    def channel(self) -> str:
        return f"shell_{self.name}"

    @property
    def label(self) -> str:
        return f"{self.name}:"

    @property
    def done(self) -> str:
        return f"REACH {self.name}:done"

    @property
    def absent(self) -> str:
        return f"REACH {self.name}:absent"

    def tries(self, places: list[Place]) -> list[Place]:
        return [p for p in places if p.kind in self.kinds and p.absent is None]


BASH, CURL, NODE = Program("bash", ("tcp",)), Program("curl", ("tcp", "unix")), Program("node", ("tcp", "unix"))
PROGRAMS = (BASH, CURL, NODE)


def script(places: list[Place]) -> str:
    """The shell lines that run every program against its places (each ends with its `done`; never exits)."""
    cases = "".join(f"    *{shlex.quote(words)}*) echo {code} ;;\n" for words, code in ERRNOS.items())
    lines = ["reach_errno() {", "  case $1 in", cases.rstrip("\n"), "  esac", "}", *_bash(), *_curl()]
    for program in PROGRAMS:
        lines += locate(program.name)
        lines.append('if [ -n "$found" ]; then')
        lines += [f"  {line}" for line in _calls(program, places)]
        if program is not NODE:  # Node prints its own: a Node that stopped half-way must not look finished
            lines.append(f"  echo '{program.done}'")
        lines += ["else", f"  echo '{program.absent}'", "fi"]
    return "\n".join([*lines, ""])


def finished(program: Program, result: str) -> bool:
    """The program's last line is there: every try it meant to make is in the answer."""
    return any(line.strip() == program.done for line in result.splitlines())


def not_found(program: Program, result: str) -> bool:
    return any(line.strip() == program.absent for line in result.splitlines())


def locate(name: str) -> list[str]:
    """`found`: the program on the job's PATH, else where distributions install it (a hostile job would look)."""
    where = " ".join(f"{d}/{name}" for d in ("/usr/local/bin", "/usr/bin", "/bin"))
    return [f'found=; for p in "$(command -v {name})" {where}; do [ -x "$p" ] && found=$p && break; done']


def _calls(program: Program, places: list[Place]) -> list[str]:
    tried = program.tries(places)
    if program is NODE:
        args = " ".join(f"{NODE.label}{p.name} {_host(p)} {_port(p)} {_path(p)}" for p in tried)
        return [f'"$found" -e {shlex.quote(node_code(NODE.done))} {args} </dev/null 2>&1']
    return [f"reach_{program.name} {program.label}{p.name} {_host(p)} {_port(p)} {_path(p)}" for p in tried] or [":"]


def node_code(done: str) -> str:
    """Node's script: it tries each place given as (label, host, port, unix path) in turn, then prints `done`."""
    code = NODE_SCRIPT.replace("TIMEOUT_MS", str(TIMEOUT_S * 1000)).replace("HEADERS", "\\r\\n".join(HEADERS))
    return code.replace("AT_ONCE", str(AT_ONCE)).replace("DONE", done)


def _host(place: Place) -> str:
    return shlex.quote(place.address) if place.kind == "tcp" else "''"


def _port(place: Place) -> str:
    return str(place.port) if place.kind == "tcp" else "''"


def _path(place: Place) -> str:
    return shlex.quote(place.address) if place.kind == "unix" else "''"


def _bash() -> list[str]:
    """`reach_bash LABEL HOST PORT`: one GET over /dev/tcp."""
    return [
        "reach_bash() {",
        "  local said rc words code",
        f'  said=$(timeout {TIMEOUT_S} "$found" -c {shlex.quote(BASH_GET)} _ "$2" "$3" 2>&1 </dev/null); rc=$?',
        "  IFS=$' \\t\\r\\n' read -r -d '' -a words <<<\"$said\"; said=${words[*]}  # as the Python client's",
        '  case $said in CONNECTED*) said=${said#CONNECTED }; echo "REACH $1 answered ${said:0:1000}"; return ;; esac',
        '  code=$(reach_errno "$said"); [ -z "$code" ] && [ "$rc" = 124 ] && code=ETIMEDOUT',
        '  echo "REACH $1 error connect ${code:-UNKNOWN ${said:0:200}}"',
        "}",
    ]


def _curl() -> list[str]:
    """`reach_curl LABEL HOST PORT PATH`: one GET, straight (the Python client tries the proxy); `-v` says the
    kernel's words for a failed connect, and its own lines (`* `, `> `, `< `) are dropped from an answer. An IPv6
    host is bracketed (`-g`: not a glob), a path `@name` is an abstract socket (as /proc/net/unix lists one)."""
    headers = " ".join(f"-H {shlex.quote(h)}" for h in HEADERS)
    return [
        "reach_curl() {",
        "  local said rc words code url=http://$2:$3/ args=()",
        "  case $2 in *:*) url=http://[$2]:$3/ ;; esac",
        '  [ -n "$4" ] && url=http://localhost/ && args=(--unix-socket "$4")',
        '  case $4 in @*) args=(--abstract-unix-socket "${4#@}") ;; esac',
        f'  said=$("$found" -gsSv --noproxy "*" --max-time {TIMEOUT_S} {headers} \\',
        '    "${args[@]}" "$url" 2>&1 </dev/null)',
        "  rc=$?",
        "  if [ $rc = 0 ]; then said=$(printf '%s\\n' \"$said\" | grep -v '^[*<>{}] '); fi",
        "  IFS=$' \\t\\r\\n' read -r -d '' -a words <<<\"$said\"; said=${words[*]}",
        '  [ $rc = 0 ] && echo "REACH $1 answered ${said:0:1000}" && return',
        '  code=$(reach_errno "$said")',
        f'  [ -z "$code" ] && [ $rc = 7 ] && echo "REACH $1 error socket {NO_REASON} ${{said:0:200}}" && return',
        '  echo "REACH $1 error connect ${code:-UNKNOWN ${said:0:200}}"',
        "}",
    ]
