"""Find, without the runner's help, every file that configures a job.

- runner_files: each file the runner created for the job outside its checkout (a
  snapshot of the run's directory before and after `create_job`);
- launch_files: each file named by the job's argv and environment, and the files those
  name in turn (a wrapper names its sandbox settings; a config names its plugins);
- agent_config: the agent's config directories (what it loads from them, and a plugin
  a job could plant there);
- project_config: every project-level path the agent reads in the checkout, and the
  git configuration and hooks the runner's own git would run.

Only files inside the run's directory are attacked: the pinned tools and the system are
shared by every run (a file outside is listed, not written).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from boundary.runners.contract import Job, Runner

KINDS = ("runner_files", "launch_files", "agent_config", "project_config")
MAX_SCAN_BYTES = 256 * 1024
_ABSOLUTE = re.compile(r"(?:file://)?(/[A-Za-z0-9._@%+=,/-]+)")  # ':' ends a path: it separates lists of them


@dataclass(frozen=True)
class Configuring:
    kind: str
    path: Path
    why: str


def snapshot(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()} if root.exists() else set()


def discover(runner: Runner, job: Job, created: set[Path], scope: Path) -> list[Configuring]:
    """Every configuring file of `job`; `created` are the files that appeared while the runner created it."""
    found: dict[Path, Configuring] = {}

    def add(kind: str, path: Path, why: str) -> None:
        path = Path(os.path.normpath(path))
        in_checkout = _inside(path, job.checkout)
        if path in found or not _inside(path, scope) or (in_checkout and kind != "project_config"):
            return
        found[path] = Configuring(kind, path, why)

    for path in sorted(created):
        if not _inside(path, job.checkout) and not path.is_symlink():
            add("runner_files", path, "created by the runner for this job, outside its checkout")
    for path in job.files:
        add("runner_files", path, "the runner says it wrote it for this job")
    for path, why in _named_by_launch(job):
        add("launch_files", path, why)
    for path, why in _named_in_turn([c.path for c in found.values()], scope):
        add("launch_files", path, why)
    for directory in runner.agent.config_dirs(job.env):
        for path in _files_or_plant(directory, runner.agent.config_plant):
            add("agent_config", path, f"in the agent's config directory {directory}")
    for relative, why in runner.agent.project_config_paths():
        add("project_config", job.checkout / relative, why)
    return [c for c in found.values() if _is_file(c.path) or not c.path.exists()]


def _named_by_launch(job: Job) -> list[tuple[Path, str]]:
    named = [(Path(a), f"named by argv[{i}]") for i, a in enumerate(job.argv) if a.startswith("/")]
    for key, value in job.env.items():
        named += [(Path(v), f"named by ${key}") for v in value.split(":") if v.startswith("/")]
    return [(p, why) for p, why in named if _is_file(p)]


def _named_in_turn(paths: list[Path], scope: Path) -> list[tuple[Path, str]]:
    """Absolute paths (and file:// URIs) inside `scope` written in the given files, followed until none is new."""
    seen, queue, named = set(paths), list(paths), []
    while queue:
        source = queue.pop()
        for path in _paths_in(source):
            if path not in seen and _inside(path, scope) and _is_file(path):
                seen.add(path)
                queue.append(path)
                named.append((path, f"named in {source}"))
    return named


def _paths_in(source: Path) -> list[Path]:
    try:
        data = source.read_bytes()[:MAX_SCAN_BYTES]
    except OSError:
        return []
    if b"\0" in data[:8192]:  # a database: it records what jobs did, it does not configure them
        return []
    text = data.decode(errors="ignore")
    return [Path(match.rstrip(",.:")) for match in _ABSOLUTE.findall(text)]


def _files_or_plant(directory: Path, plant: tuple[str, ...]) -> list[Path]:
    existing = [p for p in directory.rglob("*") if p.is_file() and "node_modules" not in p.parts]
    return existing + [directory / relative for relative in plant]


KERNEL_TREES = (Path("/proc"), Path("/sys"), Path("/dev"))  # kernel objects, not files a job reads its config from


def _is_file(path: Path) -> bool:
    if any(path.is_relative_to(tree) for tree in KERNEL_TREES):
        return False  # e.g. /proc/1/ns/net: a regular file to stat, where root may stat it
    try:
        return path.is_file()
    except OSError:  # e.g. a /proc entry only its owner may stat
        return False


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
