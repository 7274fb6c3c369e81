"""`just soak --load`: the CPU burners spin while the body runs and are all gone after it, however it ends."""

from __future__ import annotations

import time

import psutil
import pytest

from boundary.bench import parse
from boundary.load import cpu_load


def _cpu_seconds(pids: list[int]) -> list[float]:
    return [sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids]


def _gone(pids: list[int]) -> bool:
    return not any(psutil.pid_exists(pid) for pid in pids)


def test_load_burns_a_core_per_burner_and_stops() -> None:
    with cpu_load(2) as burners:
        pids = [burner.pid for burner in burners]
        assert len(set(pids)) == 2
        before = _cpu_seconds(pids)
        time.sleep(0.5)
        after = _cpu_seconds(pids)
        # Each spins rather than sleeps: well over a tenth of a core each, even on a busy machine.
        assert all(b - a > 0.1 for a, b in zip(before, after, strict=True)), (before, after)
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
