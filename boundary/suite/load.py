"""CPU load for `just soak --load`: a busy loop per core, so the live suite runs on a machine as busy as a CI runner.

The burners run at normal priority (not niced) so they really compete with the
jobs, the hosts and the harness for every core. They are killed when the context
exits, however it exits; one whose parent dies without that (SIGKILL) stops by itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Pure Python spinning; every million turns (~30 ms) it checks that the bench is still its parent (orphans stop).
# The parent's pid comes as an argument: read at start-up, it could already be the reaper's.
BURNER = """
import os, sys
parent = int(sys.argv[1])
while os.getppid() == parent:
    for _ in range(1_000_000):
        pass
"""


def core_count() -> int:
    return os.cpu_count() or 1


@contextmanager
def cpu_load(burners: int | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Keep `burners` (default: one per core) processes spinning until the body exits."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(core_count() if burners is None else burners):
            # Own session: Ctrl-C reaches the bench, which stops them, not each burner with a traceback.
            processes.append(subprocess.Popen([sys.executable, "-c", BURNER, str(os.getpid())], start_new_session=True))
        yield processes
    finally:
        stop(processes)


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()  # a busy loop has nothing to clean up
    for process in processes:
        process.wait()
