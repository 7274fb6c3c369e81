"""systemd-resolved for the namespace host: extracted from its Debian package, never installed.

Installing it would run its package scripts, which take over this machine's /etc/resolv.conf. The
extracted binary loads libsystemd-shared-NNN.so from this machine through its RUNPATH, so the package
fetched is the one whose version equals the installed libsystemd-shared exactly. `boundary tools install`
(boundary/cli.py) extracts it ahead of a run; a namespace host does on its first boot.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
from pathlib import Path

from boundary.host.base import HostError, host_command
from boundary.text import excerpt
from boundary.toolchain import tools

RESOLVED_BINARY = "lib/systemd/systemd-resolved"  # bookworm ships it outside /usr
EXTRACTED_MARKER = ".boundary-extracted"
FETCH_TIMEOUT_S = 300.0


def resolved_root() -> Path:
    """Return a directory holding systemd-resolved <host's libsystemd-shared version>, extracting it once."""
    version = _shared_version()
    root = tools.cache_root() / "systemd-resolved" / version
    if (root / EXTRACTED_MARKER).exists():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers extract once
        if not (root / EXTRACTED_MARKER).exists():
            _extract(version, root)
    return root


def _capture(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    what, fix = f"`{argv[0]}` while fetching systemd-resolved", "check that the apt mirror answers: `apt-get update`"
    try:
        return host_command(argv, cwd=cwd, timeout=FETCH_TIMEOUT_S, what=what, fix=fix)
    except FileNotFoundError as e:
        raise HostError(f"expected `{argv[0]}` on PATH to fetch systemd-resolved; it is missing ({e})") from e


def _shared_version() -> str:
    """The installed libsystemd-shared's exact version: the extracted resolved must be built against it."""
    done = _capture(["dpkg-query", "-W", "-f=${Version}", "libsystemd-shared"])
    if done.returncode != 0 or not done.stdout.strip():
        raise HostError(
            "expected the host package libsystemd-shared (systemd-resolved must match its version); "
            f"dpkg-query said: {excerpt(done.stderr)!r}. Fix: apt-get install libsystemd-shared"
        )
    return done.stdout.strip()


def _extract(version: str, root: Path) -> None:
    """Download the .deb into a temporary directory and unpack it beside `root`, then move it into place whole."""
    with tempfile.TemporaryDirectory(prefix="boundary-resolved-") as tmp:
        done = _capture(["apt-get", "download", f"systemd-resolved={version}"], cwd=Path(tmp))
        debs = sorted(Path(tmp).glob("systemd-resolved_*.deb"))
        if done.returncode != 0 or not debs:
            raise HostError(
                f"expected `apt-get download systemd-resolved={version}` to fetch a .deb; it said: "
                f"{(done.stdout + done.stderr).strip()[-600:]!r}. Fix: `apt-get update`, and check that "
                f"`apt-cache policy systemd-resolved` lists {version} (never `apt-get install` it)"
            )
        staging = root.with_name(root.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        done = _capture(["dpkg-deb", "-x", str(debs[0]), str(staging)])
        if done.returncode != 0 or not (staging / RESOLVED_BINARY).exists():
            raise HostError(
                f"expected `dpkg-deb -x` to unpack {RESOLVED_BINARY} from {debs[0].name}; it said: "
                f"{excerpt(done.stderr)!r}. Fix: apt-get install dpkg"
            )
    (staging / EXTRACTED_MARKER).write_text(version)
    shutil.rmtree(root, ignore_errors=True)
    staging.rename(root)
