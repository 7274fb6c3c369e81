"""What a job's outcome says when it failed: the transcript, and a cause the harness recognises."""

from __future__ import annotations

from pathlib import Path

from boundary.jobs.job import JobOutcome

# What runsc 20221219 (Debian 12) printed for a job under the harness's strace, measured: its Sentry panicked with
# "unable to attach: operation not permitted" in its own log.
RUNSC = (
    "running container: creating container: cannot create sandbox: cannot read client sync file: waiting for "
    "sandbox to start: EOF\n"
)


def test_a_gvisor_sandbox_that_cannot_start_under_the_trace_is_named(tmp_path: Path) -> None:
    transcript = tmp_path / "job.log"
    transcript.write_text(RUNSC)
    problem = JobOutcome("job-b", 128, 0.2, transcript).problem
    assert problem is not None and problem.startswith(f"job job-b exited 128 (transcript: {transcript})")
    assert "gVisor sandbox never started" in problem and "strace -f" in problem


def test_any_other_failure_says_only_what_it_was(tmp_path: Path) -> None:
    transcript = tmp_path / "job.log"
    transcript.write_text("Error: something else\n")
    assert JobOutcome("job-b", 1, 0.2, transcript).problem == f"job job-b exited 1 (transcript: {transcript})"
    assert JobOutcome("job-b", 0, 0.2, tmp_path / "missing.log").problem is None
