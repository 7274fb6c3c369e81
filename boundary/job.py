"""Run one job: network-isolated, with a timeout, its whole process tree reaped."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from boundary.netns import wrap
from boundary.runner import Job

GRACE_S = 3.0


@dataclass(frozen=True)
class JobOutcome:
    name: str
    exit_code: int | None  # None: killed at the timeout
    wall_s: float
    transcript: Path

    @property
    def problem(self) -> str | None:
        if self.exit_code is None:
            return f"job {self.name} timed out after {self.wall_s:.0f} s (transcript: {self.transcript})"
        if self.exit_code != 0:
            return f"job {self.name} exited {self.exit_code} (transcript: {self.transcript})"
        return None


def run_job(
    job: Job, model_socket: Path, transcript: Path, timeout_s: float, trace: Path | None, enter: tuple[str, ...] = ()
) -> JobOutcome:
    started = time.monotonic()
    with transcript.open("w") as out:
        process = subprocess.Popen(
            wrap(job.argv, job.checkout, model_socket, trace, enter),
            cwd=job.checkout,
            env=job.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            exit_code: int | None = process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            exit_code = None
        finally:
            _reap(process)
    return JobOutcome(job.name, exit_code, time.monotonic() - started, transcript)


def _reap(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the job's process group, then SIGKILL what is left after a grace period."""
    for sig, wait_s in ((signal.SIGTERM, GRACE_S), (signal.SIGKILL, GRACE_S)):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(wait_s)
        except subprocess.TimeoutExpired:
            continue
