"""`just soak --load`: the CPU burners spin while the body runs and are all gone after it, however it ends."""

from __future__ import annotations

import time

import psutil
import pytest

from boundary.suite.bench import parse
from boundary.suite.load import cpu_load

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


def test_the_critical_path_counts_overlapping_jobs_once() -> None:
    """Jobs that overlap (the sweep's A runs through B; parallel units) are one stretch of agent time."""
    from boundary.suite.bench import critical_path

    jobs = [
        {"started_at": 10.0, "wall_s": 5.0},
        {"started_at": 12.0, "wall_s": 5.0},
        {"started_at": 30.0, "wall_s": 1.0},
    ]
    assert critical_path({"scenarios": {"a": {"jobs": jobs}}}) == 8.0


def test_the_summary_gives_the_ratio_to_the_floor_and_the_harness_share() -> None:
    from boundary.suite.bench import summarise

    jobs = [{"started_at": 0.0, "wall_s": 60.0}]
    checks = {
        "a": {"jobs": jobs, "wall_s": 50.0, "floor": {"wall_s": 40.0}},
        "b": {"wall_s": 25.0, "floor": {"wall_s": 20.0}},
    }
    lines = summarise([100.0], [{"scenarios": checks}])
    assert "the checks 1.25× their floors" in lines[1] and "40% of wall time outside every job" in lines[3]


def test_a_jobs_time_is_split_at_its_first_and_last_model_request() -> None:
    from boundary.results import JobReport
    from boundary.suite.bench import phase_lines

    job = JobReport("s.job-b", 10.0, [], 0, [], started_at=100.0, requested_at=[106.0, 107.5, 109.0])
    assert job.phases() == {"startup_s": 6.0, "script_s": 3.0, "end_s": 1.0}
    assert JobReport("s.job-a", 4.0, [], 1, []).phases() is None  # it never asked: nothing to split
    report = {"scenarios": {"opencode/x": {"agent": "opencode", "jobs": [job.as_dict()]}}}
    assert phase_lines([report]) == [
        "jobs of opencode: median start-up 6.0 s, script 3.0 s, end 1.0 s "
        "(to the first model request, to the last, to the exit; 1 jobs); a step: median 1.50 s, 2 in all"
    ]
    assert job.as_dict()["requests_s"] == [6.0, 7.5, 9.0]
