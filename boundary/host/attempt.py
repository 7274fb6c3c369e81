"""How a probe runs inside a host: its result or its error as data, as root or dropped to `nobody`.

Root passes through a 0700 socket, so only another identity shows a chmod'ed bus (incident 3). The
`nobody` probes fork a child that drops its identity; everything a probe needs is imported before the fork.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

NOBODY = 65534


def attempt(probe: Callable[[], Any]) -> dict[str, Any]:
    """`{"ok": True, "value": …}` or `{"ok": False, "error": …}`, with the seconds it took: a failure is a result."""
    started = time.monotonic()
    try:
        value = probe()
    except Exception as error:  # a probe's failure is its result
        return {"ok": False, "error": f"{type(error).__name__}: {error}", "s": time.monotonic() - started}
    return {"ok": True, "value": value, "s": time.monotonic() - started}


def as_nobody(probe: Callable[[], Any]) -> Any:
    """Run a probe in a child that has dropped to nobody; its result or error comes back over a pipe."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(read_end)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        payload = attempt(probe)
        os.write(write_end, json.dumps(payload).encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(child, 0)
    return json.loads(data) if data else {"ok": False, "error": "the probe child died"}
