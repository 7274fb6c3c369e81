"""Host probes, run inside the host under test: `python -m boundary.host.inside` prints one JSON sample.

Run as root inside the host; the non-root probes fork a child that drops to
`nobody` (root passes through a 0700 socket, so only another identity shows
a chmod'ed bus). Everything a probe needs is imported before the fork.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import time
from collections.abc import Callable
from typing import Any

import dns.message
import dns.query
import dns.rdatatype
from jeepney import DBusAddress, new_method_call  # type: ignore[import-untyped]
from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

INSIDE_MARK = "BOUNDARY_HOST_INSIDE"
CANARY_NAME = "canary.boundary.test"
STUB = "127.0.0.53"
NOBODY = 65534
TIMEOUT_S = 2.0
BUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")


def bus_names() -> list[str]:
    """Hello (done by open_dbus_connection), then ListNames on the system bus."""
    with open_dbus_connection(bus="SYSTEM", auth_timeout=TIMEOUT_S) as connection:
        reply = connection.send_and_get_reply(new_method_call(BUS, "ListNames"), timeout=TIMEOUT_S)
    return sorted(name for name in reply.body[0] if not name.startswith(":"))


def resolve_system() -> list[str]:
    """Through the system resolver (/etc/resolv.conf, nsswitch), as any program would."""
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(CANARY_NAME, None, socket.AF_INET)})


def resolve_stub() -> list[str]:
    """Straight at the stub resolver; the socket is connected so a dead stub fails at once."""
    query = dns.message.make_query(CANARY_NAME, dns.rdatatype.A)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect((STUB, 53))
        answer = dns.query.udp(query, STUB, timeout=TIMEOUT_S, sock=sock)
    return sorted(item.address for rrset in answer.answer for item in rrset)


def as_nobody(probe: Callable[[], Any]) -> Any:
    """Run a probe in a child that has dropped to nobody; its result or error comes back over a pipe."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        payload = _attempt(probe)
        os.write(write_end, json.dumps(payload).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(child, 0)
    return json.loads(data) if data else {"ok": False, "error": "the probe child died"}


def _attempt(probe: Callable[[], Any]) -> dict[str, Any]:
    started = time.monotonic()
    try:
        value = probe()
    except Exception as error:  # a probe's failure is its result
        return {"ok": False, "error": f"{type(error).__name__}: {error}", "s": time.monotonic() - started}
    return {"ok": True, "value": value, "s": time.monotonic() - started}


def run_sockets(root: str = "/run") -> dict[str, dict[str, Any]]:
    """Every socket under /run, walked without following links: identity, mode, owner, POSIX ACL."""
    sockets = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISSOCK(info.st_mode):
                sockets[path] = _socket_state(path, info)
    return sockets


def _socket_state(path: str, info: os.stat_result) -> dict[str, Any]:
    try:
        acl = os.getxattr(path, "system.posix_acl_access", follow_symlinks=False).hex()
    except OSError:
        acl = None
    mode = stat.S_IMODE(info.st_mode)
    return {
        "dev": info.st_dev,
        "ino": info.st_ino,
        "mode": f"{mode:04o}",
        "uid": info.st_uid,
        "gid": info.st_gid,
        "acl": acl,
    }


def resolver_running() -> bool:
    return any(_comm(pid) == "systemd-resolve" for pid in os.listdir("/proc") if pid.isdigit())


def _comm(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/comm") as comm:
            return comm.read().strip()
    except OSError:
        return ""


def processes() -> list[str]:
    """What runs in the host, but this probe: `pid comm` of every process (a job must leave none behind)."""
    pids = [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) != os.getpid()]
    return sorted(f"{pid} {_comm(pid)}" for pid in pids if _comm(pid))


def sample(full: bool) -> dict[str, Any]:
    """Cheap probes always (bus as root and nobody, DNS both ways); sockets and processes when `full`."""
    result = {
        "at": time.time(),
        "bus_root": _attempt(bus_names),
        "bus_nobody": as_nobody(bus_names),
        "dns_system": _attempt(resolve_system),
        "dns_nobody": as_nobody(resolve_system),
        "dns_stub": _attempt(resolve_stub),
        "resolver": resolver_running(),
    }
    if full:
        result["sockets"] = run_sockets()
        result["processes"] = processes()
    return result


if __name__ == "__main__":
    # The DNS probes ask the host's resolver: only inside a disposable host is that loopback.
    if os.environ.get(INSIDE_MARK) != "1":
        sys.exit(f"boundary.host.inside: refusing to probe outside a boundary host ({INSIDE_MARK} is not set)")
    if "--serve" in sys.argv[1:]:
        for line in sys.stdin:  # one sample a line asked for: a watchdog costs no interpreter start-up
            print(json.dumps(sample(full=line.strip() == "full")), flush=True)
    else:
        print(json.dumps(sample(full="--full" in sys.argv[1:])))
