"""Pinned npm tools (agents, sandboxes) installed from committed lockfiles.

Each project under `boundary/npm/` is installed with `npm ci` into a cache
directory named by the hash of its lockfile, so a lockfile change installs
afresh and an unchanged one costs a stat.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

NPM_PROJECTS = Path(__file__).parent / "npm"
DONE_MARKER = ".boundary-installed"


class ToolsError(RuntimeError):
    pass


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "boundary"
    return Path(os.environ.get("BOUNDARY_CACHE", default))


@dataclass(frozen=True)
class NpmProject:
    """One committed package.json + package-lock.json and where it installs."""

    name: str
    postinstall: tuple[str, ...] = ()  # packages whose install script we run ourselves

    @property
    def source(self) -> Path:
        return NPM_PROJECTS / self.name

    @property
    def lock_hash(self) -> str:
        return hashlib.sha256((self.source / "package-lock.json").read_bytes()).hexdigest()[:16]

    @property
    def prefix(self) -> Path:
        return cache_root() / "npm" / f"{self.name}-{self.lock_hash}"

    def installed(self) -> bool:
        return (self.prefix / DONE_MARKER).exists()

    def install(self) -> Path:
        if self.installed():
            return self.prefix
        self.prefix.parent.mkdir(parents=True, exist_ok=True)
        with (self.prefix.parent / f".{self.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers install once
            if not self.installed():
                self._install()
        return self.prefix

    def _install(self) -> None:
        staging = self.prefix.with_name(self.prefix.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(self.source, staging)
        # Not `npm ci`: the lock names other platforms' optional binaries, which
        # a registry mirror may lack; `npm install` keeps every locked version.
        _npm(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], staging)
        for package in self.postinstall:
            _run(["node", "postinstall.mjs"], staging / "node_modules" / package)
        self._check_pins(staging)
        (staging / DONE_MARKER).write_text(self.lock_hash)
        shutil.rmtree(self.prefix, ignore_errors=True)
        staging.rename(self.prefix)

    def _check_pins(self, prefix: Path) -> None:
        pins = json.loads((self.source / "package.json").read_text())["dependencies"]
        for package, pinned in pins.items():
            manifest = prefix / "node_modules" / package / "package.json"
            found = json.loads(manifest.read_text())["version"] if manifest.exists() else "nothing"
            if found != pinned:
                raise ToolsError(f"{package}: the lockfile pins {pinned}, npm installed {found}")

    def require(self) -> Path:
        if not self.installed():
            raise ToolsError(f"pinned npm tools {self.name!r} are not installed; run `boundary tools install`")
        return self.prefix

    def bin(self, name: str) -> Path:
        return self.require() / "node_modules" / ".bin" / name

    def version(self, package: str) -> str:
        manifest = self.require() / "node_modules" / package / "package.json"
        return str(json.loads(manifest.read_text())["version"])


TOOLS = NpmProject("tools", postinstall=("opencode-ai",))  # opencode-ai, @anthropic-ai/sandbox-runtime
OPENCODE_CONFIG = NpmProject("opencode-config")  # @opencode-ai/plugin, pre-seeded into each job's config


def install_all() -> list[Path]:
    return [project.install() for project in (TOOLS, OPENCODE_CONFIG)]


def _npm(args: list[str], cwd: Path) -> None:
    if shutil.which("npm") is None:
        raise ToolsError("npm not found on PATH; install Node.js 20+ (apt-get install nodejs npm)")
    _run(["npm", *args], cwd)


def _run(command: list[str], cwd: Path) -> None:
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ToolsError(f"`{' '.join(command)}` in {cwd} failed (exit {result.returncode}):\n{result.stderr[-2000:]}")
