"""How the harness numbers another job's processes as a job's own PID namespace does (a container per job)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from boundary import proc
from boundary.jobs import pidns


@pytest.fixture
def nested() -> Iterator[int]:
    """A `sleep` in a PID namespace of its own, as this process sees it."""
    launcher = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "sleep", "60"])
    try:
        found = proc.wait_until(lambda: next(iter(psutil.Process(launcher.pid).children()), None), 10.0)
        assert found is not None, "unshare started no child"
        yield found.pid
    finally:
        launcher.kill()
        launcher.wait()


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
