"""The container host's image: built here (no registry is reachable), cached by the hash of what goes in.

debootstrap makes a Debian root file system with systemd as PID 1, dbus, systemd-resolved and the
tools jobs need (bwrap, socat, strace, ripgrep, git); `docker import` turns it into an image. The
agent stack itself (node, the pinned npm tools, the harness's Python) is bind-mounted read-only at
run time, so the container runs exactly the versions under test without copying them in.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from boundary.host.base import DNSMASQ_CONF, RESOLVED_CONF, VETH_SCRIPT, HostError, host_command
from boundary.text import excerpt
from boundary.toolchain import tools

REPOSITORY = "boundary-host"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
DEFAULT_SUITE = "bookworm"
WATCHDOG_S = 5  # resolved that cannot reach systemd's notify socket is killed this long after (incident 3)
BUILD_TIMEOUT_S = 900

PACKAGES = (
    # the host under test
    "systemd",
    "systemd-sysv",
    "dbus",
    "systemd-resolved",
    "libnss-resolve",
    "dnsmasq-base",
    "iproute2",
    "procps",
    "acl",
    # what jobs run with (srt needs bwrap, socat and rg; the harness wraps jobs in strace)
    "bubblewrap",
    "socat",
    "strace",
    "ripgrep",
    "git",
    # what reach's client runs under in a job of any user (the harness's own Python may lie where one cannot go)
    "python3",
    # shared libraries the bind-mounted Python and node load (libz, libexpat and libstdc++ come with the above)
    "libssl3",
    "libffi8",
    "libsqlite3-0",
    "libbz2-1.0",
    "liblzma5",
    "libreadline8",
)

UNIT_LINK = """\
[Unit]
Description=A veth link, so systemd-resolved considers the network up
DefaultDependencies=no
Before=systemd-resolved.service
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c '{script}'
[Install]
WantedBy=sysinit.target
"""

# No Before=systemd-resolved here: resolved is ordered before sysinit.target, this after it (a cycle).
UNIT_DNSMASQ = """\
[Unit]
Description=Upstream DNS serving the canary records
After=boundary-link.service
[Service]
ExecStart=/usr/sbin/dnsmasq -k --conf-file=/etc/boundary/dnsmasq.conf
[Install]
WantedBy=multi-user.target
"""

FILES: dict[str, str] = {
    "etc/systemd/resolved.conf.d/boundary.conf": RESOLVED_CONF,
    "etc/systemd/system/systemd-resolved.service.d/boundary-watchdog.conf": f"[Service]\nWatchdogSec={WATCHDOG_S}s\n",
    "etc/boundary/dnsmasq.conf": DNSMASQ_CONF,
    "etc/systemd/system/boundary-link.service": UNIT_LINK.format(script=VETH_SCRIPT),
    "etc/systemd/system/boundary-dnsmasq.service": UNIT_DNSMASQ,
    "etc/machine-id": "",  # systemd makes one at boot
}
LINKS: dict[str, str] = {  # `systemctl enable`, done by hand
    f"etc/systemd/system/{target}.wants/{unit}": f"/etc/systemd/system/{unit}"
    for target, unit in (("sysinit.target", "boundary-link.service"), ("multi-user.target", "boundary-dnsmasq.service"))
}
SLIMMED = ("var/cache/apt", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/locale")
IMPORT_CHANGES = ('CMD ["/lib/systemd/systemd"]', "LABEL boundary.image=host")


def host_suite() -> str:
    """The Debian release to build: this machine's, so the bind-mounted Python and node find the same glibc."""
    release = _os_release()
    if release.get("ID") == "debian" and release.get("VERSION_CODENAME"):
        return release["VERSION_CODENAME"]
    return DEFAULT_SUITE


def _os_release() -> dict[str, str]:
    try:
        text = Path("/etc/os-release").read_text()
    except FileNotFoundError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {key: value.strip('"') for key, value in pairs}


def mirror() -> str:
    """The Debian mirror apt already uses here (deb822 or one-line sources), else deb.debian.org."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))]
    for source in sources:
        with contextlib.suppress(OSError):
            found = re.search(r"(?m)^(?:URIs:|deb)\s+(\S+/debian)/?\s", source.read_text() + "\n")
            if found:
                return found.group(1)
    return DEFAULT_MIRROR


def image_tag(suite: str) -> str:
    """`boundary-host:<hash>` of everything that shapes the image, so any change builds a new one."""
    recipe = json.dumps([suite, PACKAGES, FILES, LINKS, SLIMMED, IMPORT_CHANGES], sort_keys=True)
    return f"{REPOSITORY}:{hashlib.sha256(recipe.encode()).hexdigest()[:16]}"


def ensure_image(progress: Callable[[str], None] = print) -> str:
    """The tag of the host image, built once per recipe (about a minute) and reused after."""
    suite = host_suite()
    tag = image_tag(suite)
    if _image_exists(tag):
        return tag
    build_root = tools.cache_root() / "image-build"
    build_root.mkdir(parents=True, exist_ok=True)
    with _locked(build_root / ".lock"):  # parallel test workers build once
        if not _image_exists(tag):
            progress(f"[boundary] building the container host image {tag} (debootstrap {suite}, about a minute, once)")
            _build(tag, suite, build_root / tag.split(":")[1])
    return tag


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _image_exists(tag: str) -> bool:
    return _docker(["image", "inspect", tag]).returncode == 0


def _build(tag: str, suite: str, rootfs: Path) -> None:
    if shutil.which("debootstrap") is None:
        raise HostError(
            "expected `debootstrap` on PATH to build the container host image. Fix: apt-get install debootstrap"
        )
    _remove(rootfs)
    try:
        _debootstrap(suite, rootfs)
        _unmount_under(rootfs)
        _configure(rootfs)
        _import(rootfs, tag)
    finally:
        _remove(rootfs)


def _remove(rootfs: Path) -> None:
    """The build's root, once nothing is mounted in it: a removal never reaches through a mount into the host's."""
    _unmount_under(rootfs)
    shutil.rmtree(rootfs, ignore_errors=True)


def _unmount_under(rootfs: Path) -> None:
    """What debootstrap left mounted in the root (its `/proc`, when a package's process kept it busy at exit, as
    seen here): unmounted, deepest first and lazily, so that neither the image nor a removal takes the host's."""
    root = str(rootfs.resolve())
    with open("/proc/self/mounts") as mounts:  # octal escapes in mount points (\040 for a space) left as they are
        points = [line.split()[1] for line in mounts]
    for point in sorted({p for p in points if p.startswith(root + "/")}, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)


def _debootstrap(suite: str, rootfs: Path) -> None:
    argv = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", suite, str(rootfs), mirror()]
    fix = f"check that {mirror()} is reachable (`apt-get update` uses the same mirror)"
    done = host_command(argv, timeout=BUILD_TIMEOUT_S, what=f"debootstrap of {suite}", fix=fix)
    if done.returncode != 0:
        log = rootfs / "debootstrap" / "debootstrap.log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else (done.stdout + done.stderr)[-1500:]
        raise HostError(
            f"expected debootstrap of {suite} from {mirror()} to succeed; it exited {done.returncode}:\n{tail}\n"
            "Fix: check that this mirror is reachable (`apt-get update` uses the same one)"
        )


def _configure(rootfs: Path) -> None:
    for relative, text in FILES.items():
        path = rootfs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for relative, target in LINKS.items():
        link = rootfs / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.unlink(missing_ok=True)
        link.symlink_to(target)
    for relative in SLIMMED:
        for child in (rootfs / relative).glob("*"):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()


# tar streams the root into `docker import` ($1 the root, $2 the tag, the rest `--change` options); a shell
# pipeline so that one timeout (proc.run's, on its whole process group) bounds both, and pipefail keeps tar's failure.
# --one-file-system: never a file system mounted in the root (a second guard beside `_unmount_under`).
IMPORT_PIPELINE = 'set -o pipefail; tar -C "$1" --numeric-owner --one-file-system -c . | docker import "${@:3}" - "$2"'
IMPORT_TIMEOUT_S = 600.0


def _import(rootfs: Path, tag: str) -> None:
    changes = [arg for change in IMPORT_CHANGES for arg in ("--change", change)]
    argv = ["bash", "-c", IMPORT_PIPELINE, "import", str(rootfs), tag, *changes]
    fix = "check that the Docker engine runs (`docker version`) and that its disk has room for the image"
    done = host_command(argv, timeout=IMPORT_TIMEOUT_S, what=f"`docker import` of {rootfs} as {tag}", fix=fix)
    if done.returncode != 0:
        raise HostError(
            f"expected `docker import` to create {tag} from {rootfs}; it exited {done.returncode} and said: "
            f"{excerpt(done.stderr, 600)!r}. Fix: {fix}"
        )


def _docker(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        what, fix = f"`docker {argv[0]}` to answer", "check that the Docker engine runs: `docker version`"
        return host_command(["docker", *argv], timeout=60, what=what, fix=fix)
    except FileNotFoundError as error:
        raise HostError(f"expected the `docker` command on PATH ({error}). Fix: apt-get install docker.io") from error
