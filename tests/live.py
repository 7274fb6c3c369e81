"""What the live tests share: the real suite run in a subprocess pytest, and its JSON report."""

from __future__ import annotations

import fcntl
import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from boundary.suite import pytest_args
from boundary.suite.runs import HOST_SEARCH_LOCK

# A last-resort bound on a hung run (each job has its own timeout). The default run, every agent, took 4-5 min alone on
# a 2-core CI machine on a slow day and over 10 min beside the other worker's live tests: it was cut short at 600 s.
SUITE_TIMEOUT_S = 1800


def run_suite(
    pytester: pytest.Pytester, *options: str, timeout: float = SUITE_TIMEOUT_S
) -> tuple[pytest.RunResult, dict[str, Any]]:
    """The live suite with `options`, and the report it wrote (a run that wrote none fails here, with its output)."""
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(*pytest_args(), "--boundary-report", str(report), *options, timeout=timeout)
    assert report.exists(), f"the suite wrote no report:\n{result.stdout.str()[-3000:]}"
    return result, json.loads(report.read_text())


@contextmanager
def no_host_search() -> Iterator[None]:
    """While no run searches the host: another worker's sweep, started once this test's run let go of the host,
    plants its own canaries in /tmp meanwhile — they are not this run's leftovers."""
    with HOST_SEARCH_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


STOCK_ETC = Path(__file__).resolve().parent / "stock_etc"


def stock_hosts(distribution: str, directory: Path) -> Path:
    """A distribution's stock /etc/hosts (tests/stock_etc/), naming this machine where the distribution does."""
    written = directory / f"{distribution}-hosts"
    text = (STOCK_ETC / f"{distribution}-hosts").read_text()
    written.write_text(text.replace("{hostname}", socket.gethostname()))
    return written
