"""What `boundary runner check` can see is wrong with a runner before any agent starts: each finding one line.

None of these breaks the protocol, so the run goes on; each is what the live suite would find the slow way (the
runner secret in a job's view, two jobs sharing a directory) or a reason it could not judge (an argv that never
runs the agent without a terminal, a sandbox whose failed start nothing describes, paths outside STATE).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from boundary.runners.contract import Job, Runner
from boundary.sandboxes import STARTUP_FAILURES

NOT_WALKED = frozenset({".git", "node_modules"})  # the repository's own store, packages: not the runner's writing
MAX_READ = 1 << 20  # a file the runner wrote for a job is small; a larger one is not read for the secret


def findings(runner: Runner, jobs: list[Job], state: Path, secret: str) -> list[str]:
    """Every finding, in order: the runner's sandbox, then each job, then what the jobs share."""
    said = _describe(runner)
    for job in jobs:
        said += _secret_in_view(job, secret) + _batch_mode(job, runner) + _outside_state(job, runner, state)
    return said + _shared(jobs, runner)


def _describe(runner: Runner) -> list[str]:
    """A sandbox whose failed start nothing describes; a text two layers claim (no refusal with it is credited)."""
    name = runner.sandbox.name
    said = [
        f"describe: sandbox {name!r} is none boundary knows and declares no startup_failures: a sandbox that never "
        "started a command could read as its refusal. Add the texts it prints when it cannot start"
    ]
    said = [] if name in STARTUP_FAILURES or runner.sandbox.startup_failures else said
    layers_of: dict[str, list[str]] = {}
    for layer, texts in runner.denials.items():
        for text in texts:
            layers_of.setdefault(text, []).append(layer)
    shared = {text: layers for text, layers in layers_of.items() if len(layers) > 1}
    said += [
        f"describe: layers {' and '.join(map(repr, layers))} both declare {text!r}: a refusal carrying it is "
        "credited to neither (INCONCLUSIVE). Keep each text to the one layer that says it"
        for text, layers in shared.items()
    ]
    return said


def _secret_in_view(job: Job, secret: str) -> list[str]:
    """The runner secret where the job (and any code it runs) can read it: its env, its argv, its files."""
    where = [f"env {key}" for key, value in job.env.items() if secret in value]
    where += [f"argv[{index}]" for index, arg in enumerate(job.argv) if secret in arg]
    where += [str(path) for path in _files(job) if secret in _text(path)]
    return [f"create-job {job.name}: the runner secret is in the job's view: {', '.join(where)}"] if where else []


def _files(job: Job) -> Iterator[Path]:
    roots = dict.fromkeys(p for p in (job.checkout, job.data_dir, job.paths.tmp) if p is not None and p.is_dir())
    for root in roots:
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = [d for d in subdirectories if d not in NOT_WALKED]
            yield from (Path(directory) / name for name in files)


def _text(path: Path) -> str:
    try:
        if path.is_symlink() or path.stat().st_size > MAX_READ:
            return ""
        return path.read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _batch_mode(job: Job, runner: Runner) -> list[str]:
    """The agent's command in the argv with none of the arguments that run it without a terminal after it."""
    agent = runner.agent
    at = next((i for i, arg in enumerate(job.argv) if Path(arg).name == agent.command), None)
    if at is None or any(arg in agent.batch_mode for arg in job.argv[at + 1 :]):
        return []  # the agent runs it as given, or a launcher starts it: boundary cannot see which
    modes = " or ".join(agent.batch_mode)
    return [f"create-job {job.name}: argv runs {agent.command} without {modes}: it would wait for a terminal"]


def _outside_state(job: Job, runner: Runner, state: Path) -> list[str]:
    """Directories the job's environment names outside STATE: boundary neither plants in them nor restores them."""
    names = ("HOME", "TMPDIR", *runner.agent.own_dirs_env)
    outside = [
        f"{name}={job.env[name]}"
        for name in names
        if name in job.env and Path(job.env[name]).is_absolute() and not Path(job.env[name]).is_relative_to(state)
    ]
    if not outside:
        return []
    return [f"create-job {job.name}: env names directories outside STATE ({', '.join(outside)}): {WHY_STATE}"]


WHY_STATE = "what boundary attacks there it cannot restore, and another run's jobs may meet there"


def _shared(jobs: list[Job], runner: Runner) -> list[str]:
    """Two jobs given one directory of their own kind: whatever one job leaves there, the other reads."""
    a, b = jobs
    same = ["data directory"] if a.data_dir == b.data_dir else []
    names = ("HOME", "TMPDIR", *runner.agent.own_dirs_env)
    same += [name for name in names if name in a.env and a.env[name] == b.env.get(name)]
    if not same:
        return []
    return [f"create-job: jobs {a.name} and {b.name} share their {', '.join(same)}: each can read what the other left"]
