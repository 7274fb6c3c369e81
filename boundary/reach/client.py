"""The reach scenario's client: what a job's shell runs to reach the host's secrets (`boundary.scenarios.reach`).

Copied into the probing job's checkout with its configuration beside it (`<this file>.json`); run as `python3
.boundary-reach.py MODE` by the job's shell, and by the harness outside every sandbox (to show each target answers):

- `control`: its own listeners (TCP on loopback, a unix socket here) serving the job's own canary, reached as targets;
- `known`: every target at its known address (HTTP over TCP straight, and through the proxy the environment
  names, as curl would; HTTP over a unix socket; the D-Bus handshake and `Hello` on a bus);
- `discover`: every unix socket the file system and /proc/net/unix show, and every TCP listener of
  /proc/net/tcp{,6}, each tried; its own listeners opened first, so a listing that cannot see them says so.

Each attempt prints `REACH <label> answered <excerpt>` or `REACH <label> error <stage> <ERRNO>` (errno names, not
strerror texts: no harness word can pass for a sandbox's refusal); an error that is not the OS's (a guard inside the
interpreter) as `<Type> <its message>`, the guard's words. Only the standard library.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from typing import Any

TIMEOUT_S = 2.0
# Every GET says it is this client's: one that finds the model's bridge (a runner may bind it into a container) must
# not read as a stray model request (the server's PROBE_HEADER; copied into jobs alone, this imports no harness code).
PROBE_HEADER = "X-Boundary-Probe"
MAX_FOUND = 400
DISCOVER_S = 60.0  # every socket and listener tried within this, or the cut is said
ANY_ADDRESS = {"0.0.0.0": "127.0.0.1", "::": "::1"}  # a listener on every address, reached on loopback
# Not searched for sockets: kernel views, the distribution's tree, package and git trees (half the files, no socket).
PRUNED = ["-path", "/proc", "-o", "-path", "/sys", "-o", "-path", "/usr", "-o", "-name", "node_modules"]
FIND_SOCKETS = ["find", "/", "(", *PRUNED, "-o", "-name", ".git", ")", "-prune", "-o", "-type", "s", "-print"]
AUTH = b"\0AUTH EXTERNAL %s\r\n"
# org.freedesktop.DBus.Hello, little-endian, serial 1: the first method call every bus client makes.
HELLO = bytes.fromhex(
    "6c01000100000000010000006d00000001016f00150000002f6f72672f667265656465736b746f702f44427573000000"
    "02017300140000006f72672e667265656465736b746f702e4442757300000000030173000500000048656c6c6f000000"
    "06017300140000006f72672e667265656465736b746f702e4442757300000000"
)


def say(label: str, outcome: str) -> None:
    print(f"REACH {label} {outcome}", flush=True)


def excerpt(data: bytes) -> str:
    return " ".join(data.decode("utf-8", "replace").split())[:400] or "(empty)"


def failure(stage: str, error: BaseException) -> str:
    if isinstance(error, socket.timeout | TimeoutError):
        return f"error {stage} ETIMEDOUT"
    if isinstance(error, OSError) and error.errno is not None:
        return f"error {stage} {errno.errorcode.get(error.errno, str(error.errno))}"
    # Not the kernel's: a guard inside the interpreter (an audit hook) raised it, and says why in its own words.
    return f"error {stage} {type(error).__name__} {excerpt(str(error).encode())}"


def http_over(sock: socket.socket, connect_to: Any, host: str) -> str:
    """GET / on a connected stream: its whole answer, or where it failed."""
    stage = "connect"
    try:
        sock.settimeout(TIMEOUT_S)
        sock.connect(connect_to)
        stage = "send"
        sock.sendall(f"GET / HTTP/1.0\r\nHost: {host}\r\nMetadata-Flavor: Google\r\n{PROBE_HEADER}: 1\r\n\r\n".encode())
        stage = "recv"
        data = b""
        while len(data) < 4096 and (chunk := sock.recv(4096)):
            data += chunk
        return f"answered {excerpt(data)}"
    except Exception as error:
        return failure(stage, error)
    finally:
        sock.close()


def http_stream(family: int, connect_to: Any, host: str) -> str:
    """GET / over a new stream socket of `family` (TCP, or a unix socket: a path, or abstract as `\\0name`)."""
    try:
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as error:
        return failure("socket", error)
    return http_over(sock, connect_to, host)


def unix_address(path: str) -> str:
    """A unix socket's address: `@name` (as /proc/net/unix lists an abstract socket) is `\\0name`."""
    return "\0" + path[1:] if path.startswith("@") else path


def proxy_for() -> str | None:
    """The HTTP proxy the environment names (a sandbox's filter), tried whatever NO_PROXY says, as a job would."""
    proxies = urllib.request.getproxies_environment()
    named = [proxies.get(scheme, "") for scheme in ("http", "https", "all")]
    return next((p for p in named if p.startswith("http://")), None)


def http_via_proxy(url: str) -> str:
    proxy = proxy_for()
    if proxy is None:
        return "error proxy NONE"
    for name in ("no_proxy", "NO_PROXY"):  # through the proxy even where the environment says not to
        os.environ.pop(name, None)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    try:
        with opener.open(url, timeout=TIMEOUT_S) as response:
            return f"answered {excerpt(response.read(4096))}"
    except urllib.error.HTTPError as error:
        return f"answered HTTP {error.code} {excerpt(error.read(4096))} {excerpt(str(error.headers).encode())}"
    except urllib.error.URLError as error:
        return failure("proxy", error.reason if isinstance(error.reason, BaseException) else error)
    except Exception as error:
        return failure("proxy", error)


def dbus_hello(path: str) -> str:
    """The D-Bus handshake as this user, then a `Hello` method call: the bus's answer names this connection."""
    stage = "socket"
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(TIMEOUT_S)
        stage = "connect"
        sock.connect(unix_address(path))
        stage = "auth"
        sock.sendall(AUTH % str(os.geteuid()).encode().hex().encode())
        said = sock.recv(4096)
        if not said.startswith(b"OK"):
            return f"answered dbus-auth-refused {excerpt(said)}"
        sock.sendall(b"BEGIN\r\n" + HELLO)
        stage = "hello"
        reply = sock.recv(4096)
        name = re.search(rb":[0-9]+\.[0-9]+", reply)
        return f"answered dbus-hello {name.group().decode() if name else excerpt(reply)}"
    except Exception as error:
        return failure(stage, error)


def attempt(kind: str, where: dict[str, Any]) -> str:
    if kind == "tcp":
        address = where["address"]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return http_stream(family, (address, where["port"]), address)
    if kind == "dbus":
        return dbus_hello(where["path"])
    return http_stream(socket.AF_UNIX, unix_address(where["path"]), "localhost")


class Own:
    """The client's own listeners: each serves the job's own canary to the same code that tries the targets."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.token, self.port = config["own_token"], config["own_port"]
        self.path = os.path.join(os.getcwd(), ".boundary-reach-own.sock")
        self.opened: dict[str, str] = {}  # kind -> "" if listening, else where it failed

    def open(self) -> Own:
        self.opened["tcp"] = self._listen(socket.AF_INET, ("127.0.0.1", self.port))
        self.close()  # a socket file left by an earlier run
        self.opened["unix"] = self._listen(socket.AF_UNIX, self.path)
        return self

    def _listen(self, family: int, address: Any) -> str:
        stage = "socket"
        try:
            server = socket.socket(family, socket.SOCK_STREAM)
            if family == socket.AF_INET:
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            stage = "bind"
            server.bind(address)
            stage = "listen"
            server.listen(8)
        except OSError as error:
            return failure(stage, error)
        threading.Thread(target=self._serve, args=(server,), daemon=True).start()
        return ""

    def _serve(self, server: socket.socket) -> None:
        while True:
            connection, _ = server.accept()
            with connection:
                connection.settimeout(TIMEOUT_S)
                try:
                    connection.recv(4096)
                    body = json.dumps({"service": "own", "token": self.token}).encode()
                    connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
                except OSError:
                    pass

    def close(self) -> None:
        if os.path.lexists(self.path):
            os.unlink(self.path)


_OWN: list[Own] = []


def own_listeners(config: dict[str, Any]) -> Own:
    """The client's own listeners, opened once for every mode of this run."""
    if not _OWN:
        _OWN.append(Own(config).open())
    return _OWN[0]


def control(config: dict[str, Any]) -> None:
    own = own_listeners(config)
    for kind, where in (("tcp", {"address": "127.0.0.1", "port": own.port}), ("unix", {"path": own.path})):
        say(f"control:{kind}", own.opened[kind] or attempt(kind, where))


def known(config: dict[str, Any]) -> None:
    if (proxy := proxy_for()) is not None:
        say("env:proxy", f"named {proxy}")
    for target in config["targets"]:
        name, kind = target["name"], target["kind"]
        say(f"{name}:direct", attempt(kind, target))
        if kind == "tcp":
            say(f"{name}:proxy", http_via_proxy(f"http://{target['address']}:{target['port']}/"))


def unix_sockets() -> list[str]:
    """Every unix socket the file system shows (but /proc and /sys), and every one /proc/net/unix names."""
    found: list[str] = []
    try:
        found += subprocess.run(FIND_SOCKETS, capture_output=True, text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired) as error:
        say("discover:find", failure("find", error))
    try:
        with open("/proc/net/unix") as table:
            found += [line.split()[7] for line in table.read().splitlines()[1:] if len(line.split()) >= 8]
    except OSError as error:
        say("discover:proc-net-unix", failure("read", error))
    return list(dict.fromkeys(found))


def tcp_listeners() -> list[tuple[str, int]]:
    """Every TCP socket listening in this network namespace (/proc/net/tcp and tcp6, state 0A)."""
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            with open(table) as lines:
                rows = [line.split() for line in lines.read().splitlines()[1:]]
        except OSError as error:
            say(f"discover:{table}", failure("read", error))
            continue
        for row in rows:
            if len(row) > 3 and row[3] == "0A":
                address, port = row[1].split(":")
                raw = bytes.fromhex(address)
                packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                found.append((socket.inet_ntop(family, packed), int(port, 16)))
    return list(dict.fromkeys(found))


def skipped(path: str, config: dict[str, Any]) -> bool:
    """The harness's own sockets (its scripted model's), and other harness runs' (a neighbour's jobs are no target)."""
    skip = config["skip"]
    return path in skip["paths"] or (path.startswith(tuple(skip["under"])) and not path.startswith(skip["own"]))


def discover(config: dict[str, Any]) -> None:
    own = own_listeners(config)
    paths, listeners = unix_sockets(), tcp_listeners()
    say("discover:own-tcp", own.opened["tcp"] or ("listed" if (("127.0.0.1", own.port) in listeners) else "unlisted"))
    say("discover:own-unix", own.opened["unix"] or ("listed" if own.path in paths else "unlisted"))
    paths = [p for p in paths if p != own.path and not skipped(p, config)]
    listeners = [(a, p) for a, p in listeners if p not in config["skip"]["ports"] and p != own.port]
    tries: list[tuple[str, str, dict[str, Any]]] = []
    tries += [(f"found:unix:{p}", "dbus" if "bus" in os.path.basename(p) else "unix", {"path": p}) for p in paths]
    tries += [(f"found:tcp:{a}:{p}", "tcp", {"address": ANY_ADDRESS.get(a, a), "port": p}) for a, p in listeners]
    deadline = time.monotonic() + DISCOVER_S
    for done, (label, kind, where) in enumerate(tries):
        if done >= MAX_FOUND or time.monotonic() > deadline:  # what was not tried must not read as not there
            say("discover:cut", f"named tried {done} of {len(tries)}")
            break
        say(label, attempt(kind, where))


def everything(config: dict[str, Any]) -> None:  # all three in one run (one sandbox start: each costs a second)
    for mode in (control, known, discover):
        mode(config)


MODES = {"control": control, "known": known, "discover": discover, "all": everything}

if __name__ == "__main__":
    with open(os.path.abspath(__file__) + ".json") as file:
        CONFIG = json.load(file)
    MODES[sys.argv[1]](CONFIG)
    for listeners in _OWN:
        listeners.close()
    print("REACH done", flush=True)
