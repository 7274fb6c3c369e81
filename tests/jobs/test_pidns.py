"""How the harness numbers another job's processes as a job's own PID namespace does (a container per job)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from boundary import proc
from boundary.jobs import pidns
from boundary.scenarios.sweep.search import seen_from_a_sentry


@pytest.fixture
def nested() -> Iterator[int]:
    """A `sleep` in a PID namespace of its own, as this process sees it."""
    launcher = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "sleep", "60"])
    try:
        # The child, once it has exec'd `sleep` (until then it is a copy of unshare, and its program is unshare's)
        found = proc.wait_until(lambda: next((c for c in _children(launcher.pid) if _runs_sleep(c)), None), 10.0)
        assert found is not None, "unshare started no child running sleep"
        yield found.pid
    finally:
        launcher.kill()
        launcher.wait()


def _children(pid: int) -> list[psutil.Process]:
    return psutil.Process(pid).children()


def _runs_sleep(child: psutil.Process) -> bool:
    try:
        return child.cmdline()[:1] == ["sleep"]
    except psutil.NoSuchProcess:
        return False


def test_a_process_is_numbered_by_each_namespace_it_is_in_and_by_no_other(nested: int) -> None:
    ours, theirs = pidns.namespace_of(os.getpid()), pidns.namespace_of(nested)
    assert ours is not None and theirs is not None and ours != theirs
    assert pidns.ancestry(nested)[:2] == [theirs, ours]
    assert pidns.seen_from(theirs, nested) == 1  # its namespace's init
    assert pidns.seen_from(ours, nested) == nested
    assert pidns.seen_from(theirs, os.getpid()) is None  # the container cannot name us


def test_the_agent_is_found_by_the_program_it_runs(nested: int) -> None:
    sleep = Path(psutil.Process(nested).exe())
    assert pidns.running([sleep], [os.getpid(), nested]) == [nested]
    assert pidns.running([Path(sys.executable), Path("/nonexistent")], [nested]) == []


@pytest.fixture
def sentries() -> Iterator[Callable[[], tuple[int, int]]]:
    """Makes a launcher (a shell) with a child that calls itself `runsc-sandbox`, as gVisor's Sentry does."""
    made: list[subprocess.Popen[bytes]] = []

    def make() -> tuple[int, int]:
        launcher = subprocess.Popen(["bash", "-c", "(exec -a runsc-sandbox sleep 60) & wait"])
        made.append(launcher)
        child = proc.wait_until(lambda: next(iter(psutil.Process(launcher.pid).children()), None), 10.0)
        # None until the subshell has exec'd (a False would end the wait at once)
        assert child is not None and proc.wait_until(lambda: child.cmdline()[:1] == ["runsc-sandbox"] or None, 10.0)
        return launcher.pid, child.pid

    yield make
    for launcher in made:
        for child in psutil.Process(launcher.pid).children(recursive=True):
            child.kill()
        launcher.kill()
        launcher.wait()


def test_a_job_in_a_sentry_of_its_own_is_out_of_another_sentrys_view(sentries: Callable[[], tuple[int, int]]) -> None:
    (a_launcher, a_sentry), (b_launcher, b_sentry) = sentries(), sentries()
    assert pidns.user_space_kernels([b_launcher]) == {b_sentry}
    view = seen_from_a_sentry({b_sentry}, [a_launcher])
    assert view.pids == [] and view.hidden is not None and f"another (pid {a_sentry})" in view.hidden


def test_a_shared_sentry_or_one_not_found_claims_nothing(sentries: Callable[[], tuple[int, int]]) -> None:
    """Job A's agent in B's own Sentry (or nowhere the harness can see): no verdict of "hidden", the cells stay
    unknown (INCONCLUSIVE) unless a sweep finds A's canaries."""
    launcher, sentry = sentries()
    assert seen_from_a_sentry({sentry}, [launcher]).hidden is None
    assert seen_from_a_sentry({sentry}, [os.getpid()]).hidden is None
