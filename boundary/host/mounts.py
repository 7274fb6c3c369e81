"""What a container host bind-mounts from here: exactly what jobs run, never a system directory.

Jobs inside run the harness's own Python, node and pinned tools at the same paths as here. Mounting a
whole prefix is wrong for a distribution Python, whose prefix is /usr: that mount hid the image's own
systemd-resolved and NSS module, and the canary never resolved.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import boundary
from boundary.host.base import HostError, host_command
from boundary.toolchain import tools

MAX_SYMLINK_HOPS = 40  # the kernel's own limit (ELOOP)

# Where the image's own system lives. A bind mount of one of these, or of a parent, hides the image's copy:
# with /usr went its systemd-resolved and NSS module, and the canary never resolved.
SYSTEM_DIRS = tuple(
    Path(path)
    for path in (
        *("/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt", "/opt"),
        *("/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/include", "/usr/lib"),
        *("/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/libx32", "/usr/local", "/usr/local/bin", "/usr/local/lib"),
        *("/usr/sbin", "/usr/share", "/var", "/var/lib", "/var/tmp"),
    )
)
# Where the image keeps the shared libraries of its packages (image.PACKAGES): one loaded from here is the
# image's to provide. Mounting the host's copy over it would mix two systems' libraries.
LIBRARY_DIRS = tuple(
    Path(path) for path in ("/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64")
)


@dataclass(frozen=True)
class Interpreter:
    """The harness's Python as it sees itself: jobs and probes inside run exactly this one."""

    executables: tuple[Path, ...]  # sys.executable, as jobs invoke it, and each symlink on to the real file
    venv: Path | None  # sys.prefix, when that is a venv
    stdlib: tuple[Path, ...]  # sysconfig's stdlib and platstdlib (lib-dynload's extension modules in it)
    stdlib_links: tuple[Path, ...]  # where the stdlib's symlinks lead outside it (Debian: /etc/python3.11/…)
    site: tuple[Path, ...]  # the site-packages directories it imports from
    libdir: Path | None  # sysconfig's LIBDIR: its libpython, and libraries its extension modules load
    libpython: str  # the soname of its shared libpython, if it was built with one
    linked: tuple[Path, ...]  # what the executable loads (ldd)
    multiarch: str  # e.g. x86_64-linux-gnu: names the per-architecture system library directories

    @classmethod
    def current(cls) -> Interpreter:
        stdlib = tuple(dict.fromkeys(Path(sysconfig.get_paths()[key]).resolve() for key in ("stdlib", "platstdlib")))
        libdir = sysconfig.get_config_var("LIBDIR")
        return cls(
            executables=symlink_hops(Path(sys.executable)),
            venv=Path(sys.prefix).resolve() if sys.prefix != sys.base_prefix else None,
            stdlib=stdlib,
            stdlib_links=_links_out_of(stdlib),
            site=_site_dirs(),
            libdir=Path(libdir).resolve() if libdir else None,
            libpython=str(sysconfig.get_config_var("INSTSONAME") or ""),
            linked=linked_libraries(Path(sys.executable).resolve()),
            multiarch=str(sysconfig.get_config_var("MULTIARCH") or ""),
        )

    def paths(self) -> dict[Path, str]:
        """What it needs inside, each with why; never a system directory (its LIBDIR may be one: then narrower)."""
        wanted = dict.fromkeys(self.executables, "the Python interpreter")
        wanted |= dict.fromkeys(self.stdlib, "its standard library") | dict.fromkeys(self.site, "its site-packages")
        wanted |= dict.fromkeys(self.stdlib_links, "what its standard library links to")
        wanted |= {self.venv: "its venv"} if self.venv else {}
        if self.libdir and not _system_dir_in(self.libdir, system_dirs(self.multiarch)):
            wanted[self.libdir] = "its library directory"
        # Its own libpython even from a system directory: an image without this Python has none.
        foreign = foreign_libraries(self.linked, own=frozenset({self.libpython}) - {""})
        return wanted | dict.fromkeys(foreign, "a shared library the interpreter loads")


def symlink_hops(path: Path) -> tuple[Path, ...]:
    """`path` and each symlink it leads through to the file: inside, every hop must exist for the last to be found.

    A venv's python -> python3 -> /usr/bin/python3 -> python3.11: mounting only the ends leaves a dangling link.
    """
    hops = [path.parent.resolve() / path.name]
    while hops[-1].is_symlink() and len(hops) < MAX_SYMLINK_HOPS:
        target = hops[-1].parent / os.readlink(hops[-1])
        hops.append(target.parent.resolve() / target.name)
    return tuple(dict.fromkeys(hops))


def system_dirs(multiarch: str) -> tuple[Path, ...]:
    per_arch = (Path("/lib") / multiarch, Path("/usr/lib") / multiarch) if multiarch else ()
    return SYSTEM_DIRS + per_arch


def linked_libraries(binary: Path) -> tuple[Path, ...]:
    """The shared libraries `binary` loads, with its ELF interpreter (none when static or without ldd)."""
    if shutil.which("ldd") is None:
        return ()
    done = host_command(["ldd", str(binary)], timeout=30, what=f"ldd of {binary}", fix=f"run `ldd {binary}` here")
    found = (re.search(r"(?:=>\s*|^\s*)(/\S+)\s+\(0x", line) for line in done.stdout.splitlines())
    return tuple(Path(match.group(1)) for match in found if match and done.returncode == 0)


def foreign_libraries(linked: tuple[Path, ...], own: frozenset[str] = frozenset()) -> list[Path]:
    """Those the image cannot provide: from outside its library directories, or named in `own`."""
    return [lib for lib in linked if lib.name in own or not any(lib.is_relative_to(d) for d in LIBRARY_DIRS)]


def _links_out_of(directories: tuple[Path, ...]) -> tuple[Path, ...]:
    """The existing targets of top-level symlinks in `directories` that lie outside all of them."""
    targets = (entry.resolve() for directory in directories for entry in directory.iterdir() if entry.is_symlink())
    return tuple(dict.fromkeys(t for t in targets if t.exists() and not any(t.is_relative_to(d) for d in directories)))


def _site_dirs() -> tuple[Path, ...]:
    """site-packages as `site` adds them (a venv's own, or the system's), and the user's if enabled."""
    listed = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    return tuple(dict.fromkeys(Path(path).resolve() for path in listed if Path(path).is_dir()))


def _system_dir_in(path: Path, system: tuple[Path, ...]) -> Path | None:
    """The system directory that `path` is, or holds (so a mount of it would hide that), if any."""
    return next((directory for directory in system if directory.is_relative_to(path)), None)


def _node_paths() -> dict[Path, str]:
    """`node` from PATH (`#!/usr/bin/env node` finds it inside too); the wheel's comes with site-packages."""
    found = shutil.which("node")
    if found is None:
        return {}
    hops = symlink_hops(Path(found))
    paths = dict.fromkeys(hops, "node from PATH")
    return paths | dict.fromkeys(foreign_libraries(linked_libraries(hops[-1])), "a library node loads")


def shared_paths(session_dir: Path, python: Interpreter | None = None) -> dict[Path, str]:
    """What the container sees at the same path as here: the agent stack (ro) and the run's files (rw).

    Only what jobs run: never a whole prefix such as a distribution Python's /usr, which would hide the image's.
    """
    python = python or Interpreter.current()
    read_only = python.paths() | _node_paths()
    read_only[Path(boundary.__file__).resolve().parents[1]] = "the harness"
    read_only[tools.cache_root().resolve()] = "the pinned npm tools (the boundary cache)"
    session = session_dir.resolve()
    _refuse_system_dirs(read_only | {session: "the run's directory"}, system_dirs(python.multiarch))
    wanted = dict.fromkeys(read_only, "ro") | {session: "rw"}
    kept: dict[Path, str] = {}
    for path in sorted(wanted):  # a parent before its children: a child it already covers alike is left out
        if not any(path.is_relative_to(parent) and mode == wanted[path] for parent, mode in kept.items()):
            kept[path] = wanted[path]
    return kept


def _refuse_system_dirs(paths: dict[Path, str], system: tuple[Path, ...]) -> None:
    for path, why in paths.items():
        hidden = _system_dir_in(path, system)
        if hidden is not None:
            raise HostError(
                f"container host: refusing to bind-mount {path} ({why}): it is or holds {hidden}, and would hide the "
                "image's own (as a mount of /usr hid its systemd-resolved and NSS module). "
                "Fix: keep it in a directory of its own (the cache: BOUNDARY_CACHE=/var/cache/boundary)"
            )
