"""One way to run a command and wait for it: captured, in its own process group, and ended whole on timeout.

`subprocess.run(timeout=...)` kills only the child it started and then waits for the pipes, which a
grandchild can hold open forever; and its `TimeoutExpired` names neither what was expected nor a fix.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

# Before a command that starts something long-lived (a host, a pod, a job): it is SIGKILLed if the harness dies
# (killed, or a CI job cancelled), and `unshare --kill-child` then takes its namespace's processes with it. The
# signal comes when the *thread* that started it ends: start such commands from a thread that outlives them.
DIES_WITH_US = ("setpriv", "--pdeathsig", "KILL", "--")
GRACE_S = 3.0  # between SIGTERM and SIGKILL, and for the pipes to close after
TAIL_CHARS = 600


class ProcTimeout(RuntimeError):
    """A command outlived its timeout; its process group was killed. The text says expected / seen / fix."""

    def __init__(self, what: str, argv: Sequence[str], timeout_s: float, output: str) -> None:
        self.what, self.argv, self.timeout_s = what, list(argv), timeout_s
        self.tail = output.strip()[-TAIL_CHARS:]
        self.problem = (
            f"expected {what} (`{_shown(argv)}`) to finish within {timeout_s:g} s; it was still running, "
            f"so its process group was killed. Its last output: {self.tail or '(none)'!r}."
        )
        super().__init__(f"{self.problem} Fix: run `{_shown(argv)}` by hand to see where it hangs.")


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    what: str,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run argv to completion with its output captured; raise ProcTimeout once `timeout` seconds pass."""
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a group of its own, so a timeout ends its children too
    )
    try:
        out, err = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = _end(process)
        raise ProcTimeout(what, argv, timeout, out + err) from None
    except BaseException:  # e.g. Ctrl-C: leave nothing of it running
        _end(process)
        raise
    return subprocess.CompletedProcess(list(argv), process.returncode, out, err)


def wait_until(condition: Callable[[], T | None], timeout_s: float, interval_s: float = 0.05) -> T | None:
    """Call `condition` until it returns something other than None (returned) or `timeout_s` passes (None).

    It is asked once more at the deadline, so a slow last interval cannot turn a success into a timeout.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        outcome = condition()
        if outcome is not None or time.monotonic() >= deadline:
            return outcome
        time.sleep(min(interval_s, max(0.0, deadline - time.monotonic())))


def stop_group(process: subprocess.Popen[Any], grace_s: float = GRACE_S) -> None:
    """SIGTERM the process's group, then SIGKILL it if the leader outlives a grace period.

    A leader that has already exited leaves its group alone: what it left running is for the host checks to see.
    """
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            continue


def _end(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Kill a timed-out command's whole group and return what it wrote."""
    stop_group(process)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # members that ignored SIGTERM would hold our pipes open
    try:
        out, err = process.communicate(timeout=GRACE_S)
    except subprocess.TimeoutExpired as error:  # something that left the group holds them: keep what came
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
        process.wait()
        return _text(error.stdout), _text(error.stderr)
    return out or "", err or ""


def _text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def _shown(argv: Sequence[str]) -> str:
    shown = " ".join(argv)
    return shown if len(shown) <= 200 else shown[:199] + "…"
