"""`just soak --load`: the CPU burners spin while the body runs and are all gone after it, however it ends."""

from __future__ import annotations

import time

import psutil
import pytest

from boundary.bench import parse
from boundary.load import cpu_load

SPUN_S = 0.5  # CPU seconds each burner must gather; a process that sleeps gathers none


def _cpu_seconds(pids: list[int]) -> list[float]:
    return [sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids]


def _gone(pids: list[int]) -> bool:
    return not any(psutil.pid_exists(pid) for pid in pids)


def test_load_burns_a_core_per_burner_and_stops() -> None:
    with cpu_load(2) as burners:
        pids = [burner.pid for burner in burners]
        assert len(set(pids)) == 2
        # Each spins rather than sleeps: it gathers CPU time, however busy the machine (a sleeper never would).
        deadline = time.monotonic() + 60
        while min(_cpu_seconds(pids)) < SPUN_S and time.monotonic() < deadline:
            time.sleep(0.1)
        assert min(_cpu_seconds(pids)) >= SPUN_S, _cpu_seconds(pids)
    assert _gone(pids)


def test_load_stops_when_the_body_raises() -> None:
    with pytest.raises(KeyboardInterrupt), cpu_load(2) as burners:
        pids = [burner.pid for burner in burners]
        raise KeyboardInterrupt
    assert _gone(pids)


def test_load_defaults_to_one_burner_per_core() -> None:
    with cpu_load() as burners:
        assert len(burners) == psutil.cpu_count()


def test_bench_options_anywhere_the_rest_to_the_suite() -> None:
    args, extra = parse(["--serial-only", "20", "--load", "--host", "container"])
    assert (args.runs, args.serial_only, args.load, extra) == (20, True, True, ["--host", "container"])
    args, extra = parse(["--serial-only", "3", "--host", "container", "--load"])
    assert (args.runs, args.load, extra) == (3, True, ["--host", "container"])
