"""Host probes, run inside the host under test: `python -m boundary.host.inside` prints one JSON sample.

Run as root inside the host; the non-root probes fork a child that drops to
`nobody` (root passes through a 0700 socket, so only another identity shows
a chmod'ed bus). Everything a probe needs is imported before the fork.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from boundary.host.dbus import bus_names
from boundary.host.dns import resolve_stub, resolve_system
from boundary.host.processes import listeners, processes, resolver_running
from boundary.host.run_sockets import run_sockets
from boundary.host.services import DEFAULT_UNITS, services

INSIDE_MARK = "BOUNDARY_HOST_INSIDE"
NOBODY = 65534


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


def sample(full: bool, units: tuple[str, ...] = DEFAULT_UNITS) -> dict[str, Any]:
    """Cheap probes always (bus and DNS as root and nobody, services); /run, processes, ports when `full`."""
    result = {
        "at": time.time(),
        "bus_root": _attempt(bus_names),
        "bus_nobody": as_nobody(bus_names),
        "dns_system": _attempt(resolve_system),
        "dns_nobody": as_nobody(resolve_system),
        "dns_stub": _attempt(resolve_stub),
        "resolver": resolver_running(),
        "services": services(units),
    }
    if full:
        result["sockets"] = run_sockets()
        result["processes"] = processes()
        result["listeners"] = listeners()
    return result


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m boundary.host.inside")
    parser.add_argument("--serve", action="store_true", help="one sample per stdin line ('full' or 'cheap')")
    parser.add_argument("--full", action="store_true")
    parser.add_argument("--units", default=",".join(DEFAULT_UNITS), help="systemd units to watch, comma-separated")
    args = parser.parse_args(argv)
    units = tuple(unit for unit in args.units.split(",") if unit)
    if args.serve:
        for line in sys.stdin:  # a watchdog costs no interpreter start-up
            print(json.dumps(sample(line.strip() == "full", units)), flush=True)
    else:
        print(json.dumps(sample(args.full, units)))


if __name__ == "__main__":
    # The DNS probes ask the host's resolver: only inside a disposable host is that loopback.
    if os.environ.get(INSIDE_MARK) != "1":
        sys.exit(f"boundary.host.inside: refusing to probe outside a boundary host ({INSIDE_MARK} is not set)")
    main(sys.argv[1:])
