"""Host probes, run inside the host under test: `python -m boundary.host.inside` prints one JSON sample.

Run as root inside the host; the non-root probes fork a child that drops to
`nobody` (boundary/host/attempt.py). Which probes it takes is the host checks' records
(boundary/host/checks.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from boundary.host.checks import HOST_CHECKS
from boundary.host.properties import HOST_PROPERTIES
from boundary.host.services import DEFAULT_UNITS

INSIDE_MARK = "BOUNDARY_HOST_INSIDE"


def sample(full: bool, units: tuple[str, ...] = DEFAULT_UNITS) -> dict[str, Any]:
    """Each check's probes (boundary/host/checks.py): the cheap ones always, the full-only ones and the
    host's properties (boundary/host/properties.py) when `full`."""
    result: dict[str, Any] = {"at": time.time()}
    for check in HOST_CHECKS:
        if full or not check.full_only:
            result.update((probe.key, probe.take(units)) for probe in check.probes)
    if full:
        result.update((prop.key, prop.read()) for prop in HOST_PROPERTIES)
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
