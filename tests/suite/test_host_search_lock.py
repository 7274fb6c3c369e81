"""One search of the whole host at a time, across boundary runs: the second waits for the first, and says so."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from boundary.suite import runs
from boundary.suite.runs import ScenarioRuns

HOLD = (  # another run's search: holds the lock until its stdin closes
    "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); "
    "sys.stdin.read()"
)


def test_a_host_search_waits_while_another_run_holds_the_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "host-search.lock"
    monkeypatch.setattr(runs, "HOST_SEARCH_LOCK", lock)
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert other.stdout is not None and other.stdout.readline() == b"held\n"  # another run is searching the host
    waiting, entered = threading.Event(), threading.Event()
    said: list[str] = []

    def progress(line: str) -> None:
        said.append(line)
        waiting.set()

    runner = SimpleNamespace(progress=progress)
    sweep = SimpleNamespace(name="sweep", searches_the_host=True)

    def search() -> None:
        with ScenarioRuns._alone_on_the_host(runner, sweep):  # type: ignore[arg-type]
            entered.set()

    thread = threading.Thread(target=search, daemon=True)
    thread.start()
    assert waiting.wait(10), "the second search neither waited nor said so"
    assert not entered.is_set(), "the second search ran while the other run held the host"
    assert said == ["[boundary] sweep: waiting for another run's search of this host to end"]
    assert other.stdin is not None
    other.stdin.close()  # the other run's search ends
    other.wait(10)
    other.stdout.close()
    assert entered.wait(10), "the second search never ran once the host was free"
    thread.join(10)


def test_a_scenario_that_searches_nothing_takes_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "HOST_SEARCH_LOCK", tmp_path / "host-search.lock")
    cross_job = SimpleNamespace(name="cross_job", searches_the_host=False)
    with ScenarioRuns._alone_on_the_host(SimpleNamespace(progress=print), cross_job):  # type: ignore[arg-type]
        assert not (tmp_path / "host-search.lock").exists()
