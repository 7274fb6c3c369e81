"""`boundary runner check`'s last step: start one job of the runner as a run would, and say whether it starts.

A runner may answer every verb and still launch jobs that cannot start on this host (a container runtime that
refuses the host's cgroups, a missing binary in an image, a typo in a launcher). The check finds it in seconds,
with the job's own words, instead of a run that judges every cell INCONCLUSIVE: the scripted model asks for one
shell call and one read of the checkout; the job must reach the model, answer both, and exit 0.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from pathlib import Path

from boundary.host.base import Host
from boundary.jobs.job import JobDidNotStart, first_words
from boundary.jobs.session import Session
from boundary.model import ModelServer, Script
from boundary.model.script import ToolCall
from boundary.runners.contract import Runner
from boundary.text import excerpt

NAME = "check-start"
TIMEOUT_S = 120.0  # an agent starts in 1-7 s here; this bounds a hung launcher, not a slow one


class JobDoesNotStart(RuntimeError):
    """The runner's job did not start, or did not answer, or failed: what it said, for one line of the check."""


def start_one(runner: Runner, workdir: Path, say: Callable[[str], None], host: Host) -> None:
    """Run one job of `runner` (already set up under workdir/state) on `host`, as a run's; raise JobDoesNotStart."""
    began = time.monotonic()
    with ModelServer(workdir / "model.sock") as server:
        watch = getattr(runner, "network_watch", "trace")
        session = Session("check", server, workdir, TIMEOUT_S, network_watch=watch, progress=lambda _: None, host=host)
        with session.job(runner, NAME) as job:
            shell = runner.agent.shell("shell", "echo boundary-check")
            try:
                outcome, record = session.run(job, Script([[shell], [_read(runner, job.checkout / "README.md")]]))
            except JobDidNotStart as error:  # the check's directory goes with it: its words, not its transcript
                raise JobDoesNotStart(f"{error.what}: {error.said}") from None
    unanswered = [call for call in ("shell", "read") if call not in record.results]
    if outcome.exit_code != 0 or unanswered:
        how = f"exited {outcome.exit_code}" if outcome.exit_code is not None else "timed out"
        left = f", leaving {' and '.join(unanswered)} unanswered" if unanswered else ""
        raise JobDoesNotStart(f"the runner's job {how}{left}: {first_words(outcome.transcript)}")
    answers = "; ".join(f"{call}: {excerpt(record.results[call], 60)!r}" for call in ("shell", "read"))
    say(f"ok job {NAME}: reached the model, answered {answers}, exit 0, in {time.monotonic() - began:.1f} s")


def _read(runner: Runner, path: Path) -> ToolCall:
    """A read of `path` through the agent's read tool, or through its shell when it has none (codex)."""
    if "read" in runner.agent.lacks:
        return runner.agent.shell("read", f"cat {shlex.quote(str(path))}")
    return runner.agent.read("read", path)
