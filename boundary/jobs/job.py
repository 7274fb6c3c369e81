"""Run one job: network-isolated, with a timeout, its whole process tree reaped."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pexpect  # type: ignore[import-untyped]

from boundary import proc
from boundary.jobs.netns import wrap
from boundary.jobs.pod import Pod
from boundary.runners.contract import Job
from boundary.text import excerpt, plain


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
            why = untraceable(self.transcript)
            return f"job {self.name} exited {self.exit_code} (transcript: {self.transcript}){why}"
        return None


class JobDidNotStart(RuntimeError):
    """A unit's first job ended (or hung) before it asked the model anything: the runner's jobs do not start here,
    and no probe of the unit could prove anything. Said once, in the runner's own words, instead of as every cell."""

    def __init__(self, outcome: JobOutcome) -> None:
        self.job, self.exit_code, self.transcript = outcome.name, outcome.exit_code, outcome.transcript
        self.said = first_words(outcome.transcript)
        how = f"exited {self.exit_code}" if self.exit_code is not None else f"timed out after {outcome.wall_s:.0f} s"
        self.what = f"the runner's jobs do not start on this host: its job {how} before it asked the model anything"
        super().__init__(f"{self.what}: {self.said} (job {self.job}; transcript: {self.transcript})")

    def as_dict(self) -> dict[str, object]:
        return {"what": self.what, "said": self.said, "job": self.job, "transcript": str(self.transcript)}


def first_words(transcript: Path, lines: int = 3) -> str:
    """The first lines a job printed (where a launcher says why it cannot start), on one line."""
    try:
        text = plain(transcript.read_text(errors="replace")[:20_000])
    except OSError as error:
        return f"(its transcript could not be read: {error.strerror})"
    said = [line.strip() for line in text.splitlines() if line.strip()][:lines]
    return excerpt(" / ".join(said), 400) if said else "(it printed nothing)"


# gVisor's ptrace platform traces its own processes, which it cannot do under the harness's `strace -f`: its
# sandbox dies at start, and runsc says only that ("cannot create sandbox … waiting for sandbox to start").
_GVISOR_UNDER_STRACE = "cannot create sandbox: cannot read client sync file: waiting for sandbox to start"


def untraceable(transcript: Path) -> str:
    """Why a job that failed at start may be one the harness cannot trace ('' when nothing says so)."""
    try:
        text = transcript.read_text(errors="replace")[-20_000:]
    except OSError:
        return ""
    if _GVISOR_UNDER_STRACE not in text:
        return ""
    return (
        ". Its gVisor sandbox never started: with the ptrace platform runsc cannot run under boundary's network "
        "trace (strace -f), as its own processes must be traced by it. Fix: the runner's describe answers "
        '"network_watch": "packets" (docs/runner-protocol.md)'
    )


def run_job(
    job: Job,
    model_socket: Path,
    transcript: Path,
    timeout_s: float,
    trace: Path | None,
    enter: tuple[str, ...] = (),
    pod: Pod | None = None,
) -> JobOutcome:
    """Run the job in its own namespaces, or in `pod`'s (shared with other jobs, or watched by packets)."""
    started = time.monotonic()
    fds: tuple[int, ...] = ()
    with transcript.open("w") as out, ExitStack() as stack:
        if pod is not None:
            if trace is None and pod.packets is None:
                raise ValueError("a job in a shared namespace is always watched: traced, or by its pod's packets")
            trace_fd = stack.enter_context(trace.open("w")).fileno() if trace is not None else None
            argv = pod.wrap(job.argv, job.checkout, trace_fd)
            fds = (trace_fd,) if trace_fd is not None else ()
        else:
            argv = wrap(job.argv, job.checkout, model_socket, trace, enter)
        process = subprocess.Popen(
            argv,
            cwd=job.checkout,
            env=job.env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=fds,
        )
        try:
            exit_code: int | None = process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            exit_code = None
        finally:
            proc.stop_group(process)  # SIGTERM its group, SIGKILL after a grace period
    return JobOutcome(job.name, exit_code, time.monotonic() - started, transcript)


# Someone at the keyboard: drives the job's terminal until the job is done, by a monotonic deadline.
Operator = Callable[[pexpect.spawn, float], None]


def run_terminal_job(
    job: Job,
    model_socket: Path,
    transcript: Path,
    timeout_s: float,
    trace: Path | None,
    operator: Operator,
    enter: tuple[str, ...] = (),
    pod: Pod | None = None,
) -> JobOutcome:
    """Run the job as `run_job` does (own namespaces, traced), but on a pseudo-terminal that `operator` types into.

    The transcript is the raw terminal output. In a pod only when its packets are watched: strace there writes
    to an inherited fd, which a pty's fork does not pass.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    if pod is not None and (trace is not None or pod.packets is None):
        raise ValueError("a terminal job runs in a pod only untraced, its network watched by the pod's packets")
    if pod is not None:
        argv = pod.wrap(job.argv, job.checkout, None)
    else:
        argv = wrap(job.argv, job.checkout, model_socket, trace, enter)
    exit_code: int | None = None
    with transcript.open("wb") as out:
        child = pexpect.spawn(argv[0], argv[1:], env=job.env, cwd=str(job.checkout), dimensions=(50, 200))
        child.logfile_read = out  # what the terminal showed; nothing is read before the operator starts
        try:
            operator(child, deadline)
            child.expect(pexpect.EOF, timeout=max(0.0, deadline - time.monotonic()))
            child.wait()
            exit_code = child.exitstatus if child.signalstatus is None else 128 + child.signalstatus
        except pexpect.TIMEOUT:
            exit_code = None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)  # the pty's session: unshare --kill-child takes the rest
            child.close(force=True)
    return JobOutcome(job.name, exit_code, time.monotonic() - started, transcript)
