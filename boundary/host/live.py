"""`--host live`: this very machine. Read-only: nothing destructive runs here."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from boundary.host.base import Host, HostError, host_command

SYSTEM_BUS = Path("/run/dbus/system_bus_socket")
LIVE_FIX = "run the command by hand to see where it hangs; --host namespace checks a disposable host instead"


def new_host(session_dir: Path, progress: Callable[[str], None]) -> Host:
    """This kind's factory in the `--host` registry (boundary/host/__init__.py): nothing of its own to keep."""
    return LiveHost()


class LiveHost:
    name = "live"
    boot_s = 0.0
    disposable = False  # never run a runner's host-changing hooks here

    def start(self) -> LiveHost:
        if not SYSTEM_BUS.exists():
            raise HostError(
                f"--host live: this machine has no system bus ({SYSTEM_BUS} is missing), so there is nothing "
                "to check here; use --host namespace (a disposable host the harness boots) or --host container"
            )
        return self

    def stop(self) -> None:
        pass

    def enter(self) -> list[str]:
        return []

    def run(self, argv: list[str], timeout: float = 10) -> subprocess.CompletedProcess[str]:
        return host_command(argv, timeout=timeout, what="a command on this machine", fix=LIVE_FIX)

    def root(self) -> Path:
        return Path("/")

    def written(self) -> None:
        """Not listed: this machine's own root has no layer of its own."""
        return None

    def enter_files(self) -> None:
        return None

    def restart_resolved(self) -> None:
        """Never on the live host: restarting its services is not ours to do."""
