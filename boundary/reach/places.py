"""Where the reach scenario serves its canaries, how it serves them, and how it checks them from outside.

Every canary lives where the jobs are — never on this machine's own network or /run:

- TCP ones in the jobs' shared network namespace (`boundary.jobs.pod`), the loopback-only network that stands for
  the host's: the runner API on 127.0.0.1, the cloud metadata service on 169.254.169.254 and a "public" web
  place on 203.0.113.7 (TEST-NET-3), both addresses put on that namespace's `lo`, which has no other link: no
  packet can leave it;
- unix ones in the `/run` of the disposable host the jobs run on: a runner API socket and a Docker API socket
  (only where none is there; on a host that is not disposable, none: the real `/run` is never touched);
- the system bus is the host's own (`/run/dbus/system_bus_socket`): its answer to a `Hello` is the finding.

The server (`boundary/reach/server.py`) runs in the jobs' namespaces and dies with them; its unix sockets are
removed before the host's `/run` is compared with its baseline.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from boundary import canary, proc
from boundary.jobs.pod import Pod
from boundary.reach.judge import first, parse
from boundary.results.network import BRIDGE_PORT

PUBLIC = "203.0.113.7"  # TEST-NET-3 (RFC 5737): never routed; here only on the jobs' own loopback
METADATA = "169.254.169.254"
RUNNER_API_PORT = 8317
OWN_PORT = 4099  # the client's own listener, in whatever network its sandbox gives it
SYSTEM_BUS = "/run/dbus/system_bus_socket"
CLIENT = ".boundary-reach.py"  # in the probing job's checkout, its configuration beside it
START_TIMEOUT_S = 10.0
RUNS_PREFIX = "bnd-run-"  # boundary.suite.plugin.WORKDIR_PREFIX (not imported: the plugin imports the scenarios)


@dataclass(frozen=True)
class Place:
    """One target: where it is (`address`:`port` for TCP, a path otherwise) and the canary it answers."""

    name: str
    kind: str  # tcp, unix, dbus
    address: str
    port: int = 0
    token: str = field(default_factory=canary.new_canary)
    absent: str | None = None  # why the harness serves nothing there (then its cells are INCONCLUSIVE)

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}/" if self.kind == "tcp" else ""

    def client(self) -> dict[str, object]:
        return {"name": self.name, "kind": self.kind, "address": self.address, "port": self.port, "path": self.address}


def places() -> list[Place]:
    return [
        Place("runner_api_tcp", "tcp", "127.0.0.1", RUNNER_API_PORT),
        Place("metadata", "tcp", METADATA, 80),
        Place("runner_api_unix", "unix", "/run/boundary-runner-api.sock"),
        Place("docker_api", "unix", "/run/docker.sock"),
        Place("system_bus", "dbus", SYSTEM_BUS, token=""),
    ]


def unservable(place: Place, root: Path, disposable: bool) -> Place:
    """The place, with why it cannot be served on this host (None: it can)."""
    if place.kind != "unix":
        return place
    if not disposable:
        return replace(
            place, absent=f"{place.address}: the harness never serves in a real host's /run (use a disposable host)"
        )
    if os.path.lexists(root / place.address.lstrip("/")):
        return replace(place, absent=f"{place.address} is already there in the host: the harness does not replace it")
    return place


FOLLOWED = f"http://{PUBLIC}/to-public"  # a 302 to the public place's own page: does a tool follow one at all


def redirect(place: Place) -> str:
    """The public place's URL that answers 302 to `place`."""
    return f"http://{PUBLIC}/to-{place.name}"


@dataclass
class Public:
    """The "public" web place: its own page is the fetch tools' control, its redirects the SSRF through one."""

    token: str = field(default_factory=canary.new_canary)


def server_config(targets: list[Place], public: Public) -> dict[str, object]:
    served = [p for p in targets if p.absent is None and p.kind != "dbus"]
    tcp = [[p.name, p.address, p.port] for p in served if p.kind == "tcp"] + [["public", PUBLIC, 80]]
    return {
        "tcp": tcp,
        "unix": [[p.name, p.address] for p in served if p.kind == "unix"],
        "tokens": {**{p.name: p.token for p in served}, "public": public.token},
        "redirects": {f"/to-{p.name}": p.url for p in served if p.kind == "tcp"}
        | {"/to-public": f"http://{PUBLIC}/own"},
    }


def _in_pod(pod: Pod, *argv: str, mount: bool = True) -> list[str]:
    namespaces = ["--net", "--pid", "--mount"] if mount else ["--net"]
    return ["nsenter", "-t", str(pod.pid), *namespaces, "--", *argv]


@dataclass(frozen=True)
class Request:
    """One request a canary server answered: the place's name and the path asked for."""

    place: str
    path: str


@dataclass
class RequestLog:
    """What the canary servers answered, as they answer it; `complete` once the servers are gone and all was read."""

    requests: list[Request] = field(default_factory=list)
    complete: bool = False

    def at(self, place: str) -> set[str]:
        """The paths asked of `place`."""
        return {r.path for r in self.requests if r.place == place}


def requests_of(lines: Iterator[str]) -> Iterator[Request]:
    """The server's `request NAME PATH` lines, as requests (anything else it printed is not one)."""
    for line in lines:
        kind, _, rest = line.strip().partition(" ")
        name, _, path = rest.partition(" ")
        if kind == "request" and path:
            with contextlib.suppress(ValueError):
                yield Request(name, json.loads(path))


@contextlib.contextmanager
def served(pod: Pod, root: Path, targets: list[Place], public: Public) -> Iterator[RequestLog]:
    """Every servable place answering its canary in the pod, until the block ends (the sockets then removed). The
    log it gives fills with every request the places answer; once the block has ended, it is complete."""
    for address in (METADATA, PUBLIC):
        argv = _in_pod(pod, "ip", "addr", "add", f"{address}/32", "dev", "lo", mount=False)
        added = proc.run(argv, timeout=30, what=f"adding {address} to the jobs' loopback")
        if added.returncode != 0:
            raise RuntimeError(f"expected `{shlex.join(argv)}` to add {address}; it said: {added.stderr.strip()}")
    source = (Path(__file__).parent / "server.py").read_text()
    config = json.dumps(server_config(targets, public))
    argv = _in_pod(pod, sys.executable, "-c", source)
    # The canaries go in on stdin: in the jobs' PID namespace, an argument list is anyone's to read in /proc.
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True, start_new_session=True)
    assert server.stdout is not None and server.stdin is not None
    server.stdin.write(config + "\n")
    server.stdin.close()
    seen = RequestLog()
    # Read as they come, from the line after `ready`: a full pipe would stop the server's threads mid-answer.
    reader = threading.Thread(target=_read_requests, args=(server.stdout, seen), daemon=True)
    try:
        said = server.stdout.readline().strip()
        if said != "ready":
            raise RuntimeError(
                f"expected the reach canary server to say ready; it said {said!r} (`{shlex.join(argv[:8])} …`)"
            )
        reader.start()
        yield seen
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        if reader.is_alive():
            reader.join(START_TIMEOUT_S)  # the server is gone: its stdout is at its end
        seen.complete = reader.ident is not None and not reader.is_alive()
        server.stdout.close()
        for place in targets:
            if place.kind == "unix" and place.absent is None:
                (root / place.address.lstrip("/")).unlink(missing_ok=True)


def _read_requests(stdout: IO[str], seen: RequestLog) -> None:
    for request in requests_of(iter(stdout.readline, "")):
        seen.requests.append(request)


def write_client(checkout: Path, targets: list[Place], own: str, workdir: Path, model_socket: Path) -> Path:
    """The client and its configuration in the probing job's checkout (addresses only: no target's canary); its
    discovery leaves alone what `skipped` names (other runs' jobs are no target of this one; the runner's state,
    in this scenario's own directory, is)."""
    client = checkout / CLIENT
    client.write_text((Path(__file__).parent / "client.py").read_text())
    config = {
        "targets": [p.client() for p in targets if p.absent is None],
        "own_token": own,
        "own_port": OWN_PORT,
        "skip": skipped(workdir, model_socket),
    }
    Path(f"{client}.json").write_text(json.dumps(config, indent=1))
    return client


def skipped(workdir: Path, model_socket: Path) -> dict[str, Any]:
    """What discovery leaves alone (the client's and the shell's listing): the scripted model's socket and bridge,
    and other harness runs' directories, but not this scenario's own."""
    return {
        "ports": [BRIDGE_PORT],
        "paths": [str(model_socket)],
        "under": [f"{tempfile.gettempdir()}/{RUNS_PREFIX}"],
        "own": f"{workdir}/",
    }


def python(root: Path) -> str:
    """The interpreter the client runs under: the host's own Python 3 where it has one, else the harness's."""
    return "/usr/bin/python3" if (root / "usr/bin/python3").exists() else sys.executable


def from_outside(pod: Pod, client: Path, interpreter: str, targets: list[Place]) -> dict[str, str | None]:
    """Each target reached from outside every sandbox, in the jobs' namespaces as root: None if it answered its
    canary (the bus: its Hello), else why not. What a job's shell did not reach was there to reach."""
    argv = _in_pod(pod, interpreter, str(client), "known")
    try:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}  # straight there, as root
        done = proc.run(
            argv, timeout=60, what="the reach client, from outside every sandbox", cwd=client.parent, env=env
        )
        attempts = parse(done.stdout)
    except proc.ProcTimeout:
        attempts = []
    seen: dict[str, str | None] = {}
    for place in targets:
        if place.absent is not None:
            seen[place.name] = place.absent
            continue
        line = first(attempts, f"{place.name}:direct")
        answer = line.detail if line is not None and line.outcome == "answered" else ""
        ok = answer.startswith("dbus-hello") if place.kind == "dbus" else place.token in answer
        seen[place.name] = (
            None
            if ok
            else f"{place.name} did not answer from outside the sandbox: {line.text if line else 'no answer'}"
        )
    return seen
