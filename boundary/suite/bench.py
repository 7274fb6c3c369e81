"""`just bench`: run the live suite N times, serially and in parallel, and report where the time goes.

Each check (a scenario for one agent) runs right after its **floor**: the same jobs under the same runner, host
and tracing, with empty scripts (`--boundary-paired-floor`), i.e. what the agents cost with no probe at all, on
the machine as it is that moment (a whole-run floor an hour apart measured the machine's mood more than the
probes). It prints, per mode, wall time (min / median / max), the checks' time as a ratio to their floors', per
check what the probes add, the jobs' critical path (the time at least one job was running) and the harness's
share of the wall time outside it, and the scripted model's latency per request (p50 / p99), all read from the
runs' JSON reports. `just soak` runs the same
loop serially, without floors, and stops at the first run that fails, keeping that run's report, output
and work directory. `--load` runs it all with every core kept busy (boundary.suite.load), as on a shared CI runner.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from boundary.suite import pytest_args
from boundary.suite.load import cpu_load
from boundary.suite.prepare import WORKDIR_PREFIX

REPORTS = Path("reports")  # a failed run's evidence lands here, in the directory it runs from


def run_once(report: Path, extra: list[str], keep: bool = False, floor: bool = False) -> tuple[float, dict[str, Any]]:
    """One run of the live suite; `keep`: keep its work directory if it fails (serial runs: one known pid);
    `floor`: each check after its floor."""
    command = [sys.executable, "-m", "pytest", *pytest_args(), "-q"]
    command += ["--boundary-report", str(report), *extra, *(["--boundary-keep"] if keep else [])]
    command += ["--boundary-paired-floor"] if floor else []
    started = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        output, _ = process.communicate()
    wall = time.monotonic() - started
    workdirs = sorted(Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}{process.pid}-*")) if keep else []
    if not report.exists() or process.returncode != 0:
        kept = keep_evidence(report, output, workdirs)
        raise SystemExit(
            f"bench: the live suite failed (exit {process.returncode}) after {wall:.1f} s; kept: {kept}\n"
            f"{output[-2000:]}"
        )
    for workdir in workdirs:
        shutil.rmtree(workdir, ignore_errors=True)
    return wall, json.loads(report.read_text())


def keep_evidence(report: Path, output: str, workdirs: list[Path]) -> str:
    """A failed run's JSON report (`boundary report` renders it), its full output and its work directory."""
    REPORTS.mkdir(exist_ok=True)
    base = REPORTS / f"bench-failed-{time.strftime('%Y%m%d-%H%M%S')}"
    Path(f"{base}.log").write_text(output)
    kept = [f"{base}.log"]
    if report.exists():
        kept.append(str(shutil.copy(report, f"{base}.json")))
    for workdir in workdirs:  # renamed out of the prefix: the next run reaps work directories of dead pids
        kept.append(str(workdir.rename(workdir.with_name("bnd-failed-" + workdir.name.removeprefix(WORKDIR_PREFIX)))))
    return ", ".join(kept)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


PARALLEL = ["-n", "2", "--dist", "loadgroup"]  # a worker per core of the reference machine; a scenario per worker


def _parts(report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [item for scenario in (report.get("scenarios") or {}).values() for item in scenario.get(key) or []]


def critical_path(report: dict[str, Any]) -> float:
    """How long at least one job was running: the union of the jobs' intervals on one time line."""
    jobs = _parts(report, "jobs")
    if any("started_at" not in job for job in jobs):  # a report from before jobs said when they started
        return float(sum(job["wall_s"] for job in jobs))
    spans = sorted((job["started_at"], job["started_at"] + job["wall_s"]) for job in jobs)
    total, end = 0.0, float("-inf")
    for start, stop in spans:
        total += max(0.0, stop - max(start, end))
        end = max(end, stop)
    return total


def floor_ratio(report: dict[str, Any]) -> float | None:
    """The checks' wall time over their paired floors' (None: the run had no floors)."""
    checks = [s for s in (report.get("scenarios") or {}).values() if s.get("floor") and s.get("wall_s")]
    floors = sum(s["floor"]["wall_s"] for s in checks)
    return sum(s["wall_s"] for s in checks) / floors if floors else None


def summarise(walls: list[float], reports: list[dict[str, Any]]) -> list[str]:
    path = [critical_path(report) for report in reports]
    share = [(wall - busy) / wall for wall, busy in zip(walls, path, strict=True)]
    ratios = [r for r in map(floor_ratio, reports) if r is not None]
    versus = f"; the checks {statistics.median(ratios):.2f}× their floors (median, paired per check)" if ratios else ""
    latencies = [x for report in reports for job in _parts(report, "jobs") for x in job.get("model_latencies_s", [])]
    probes = len(_parts(reports[0], "results"))
    return [
        f"runs: {len(walls)}, probes per run: {probes}, jobs per run: {len(_parts(reports[0], 'jobs'))}",
        f"wall time:   min {min(walls):.1f} s, median {statistics.median(walls):.1f} s, max {max(walls):.1f} s"
        f"{' (floors included)' if ratios else ''}{versus}",
        f"jobs' critical path: median {statistics.median(path):.1f} s (the time at least one job was running)",
        f"harness:     median {statistics.median(share):.0%} of wall time outside every job (start, setup, hosts, "
        "planting, verdicts)",
        f"model server: {len(latencies)} requests, p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms",
        *host_lines(reports),
        *phase_lines(reports),
    ]


def check_lines(reports: list[dict[str, Any]]) -> list[str]:
    """Where a run's time goes beyond its floors', check by check (the costliest first)."""
    run: dict[str, list[float]] = {}
    floor: dict[str, list[float]] = {}
    for report in reports:
        for key, scenario in (report.get("scenarios") or {}).items():
            if scenario.get("floor") and scenario.get("wall_s"):
                run.setdefault(key, []).append(scenario["wall_s"])
                floor.setdefault(key, []).append(scenario["floor"]["wall_s"])
    extra = {key: statistics.median(run[key]) - statistics.median(floor[key]) for key in run}
    lines = ["per check: median wall time, its floor's, and what the probes add"]
    for key in sorted(run, key=lambda k: -extra[k]):
        real, base = statistics.median(run[key]), statistics.median(floor[key])
        lines.append(f"  {key:32} {real:6.1f} s  floor {base:6.1f} s  +{extra[key]:.1f} s  ({real / base:.2f}×)")
    return lines


def phase_lines(reports: list[dict[str, Any]]) -> list[str]:
    """Per agent, where its jobs' time went (medians): start-up to the first model request, the script, the end;
    and what one step of a script costs (from one model request to the next: the agent runs the step's calls)."""
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for report in reports:
        for scenario in (report.get("scenarios") or {}).values():
            jobs = [job for job in scenario.get("jobs") or [] if job.get("phases")]
            by_agent.setdefault(str(scenario.get("agent")), []).extend(jobs)
    lines = []
    for agent, jobs in sorted(by_agent.items()):
        if not jobs:
            continue
        part = {key: statistics.median(j["phases"][key] for j in jobs) for key in ("startup_s", "script_s", "end_s")}
        steps = [b - a for job in jobs for a, b in itertools.pairwise(job.get("requests_s") or [])]
        step = f"; a step: median {statistics.median(steps):.2f} s, {len(steps)} in all" if steps else ""
        lines.append(
            f"jobs of {agent}: median start-up {part['startup_s']:.1f} s, script {part['script_s']:.1f} s, "
            f"end {part['end_s']:.1f} s (to the first model request, to the last, to the exit; {len(jobs)} jobs)"
            f"{step}"
        )
    return lines


def host_lines(reports: list[dict[str, Any]]) -> list[str]:
    """What the host under test costs: boot, one cheap and one full sample, the watchdog's share of job time."""
    hosts = [
        scenario["host"]
        for report in reports
        for scenario in (report.get("scenarios") or {}).values()
        if scenario.get("host") and "cost" in scenario["host"]
    ]
    if not hosts:
        return ["host: not reported"]

    def median(key: str) -> float:
        return float(statistics.median(host["cost"][key] for host in hosts))

    boot = statistics.median(host["boot_s"] for host in hosts)
    return [
        f"host {hosts[0]['mode']}: boot median {boot:.2f} s; sample median cheap {median('cheap_sample_ms'):.1f} ms, "
        f"full {median('full_sample_ms'):.1f} ms; watchdog {median('watchdog_share'):.1%} of job time"
    ]


def parse(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """Bench options anywhere (`just soak 20 --load --host container`); every other option goes to the suite."""
    parser = argparse.ArgumentParser(prog="boundary-bench", description=__doc__, allow_abbrev=False)
    parser.add_argument("runs", nargs="?", type=int, default=5)
    parser.add_argument("--serial-only", action="store_true", help="skip the parallel runs (as `just soak` does)")
    parser.add_argument("--load", action="store_true", help="keep every core busy meanwhile (a CPU burner per core)")
    parser.add_argument("--no-floor", action="store_true", help="run no floors (as `just soak` does)")
    return parser.parse_known_args(argv)


def run_mode(mode: str, runs: int, extra: list[str], scratch: Path, under: str, floor: bool) -> list[float]:
    """N runs of the suite in this mode, each check after its floor (so both see the same machine)."""
    walls: list[float] = []
    reports = []
    keep = not any(option in ("-n", "--numprocesses") for option in extra)  # xdist workers' pids are unknown here
    for index in range(runs):
        wall, report = run_once(scratch / f"{mode}-{index}.json", extra, keep, floor)
        ratio = floor_ratio(report)
        versus = f", the checks {ratio:.2f}× their floors" if ratio is not None else ""
        print(f"[bench] {mode} run {index + 1}/{runs}{under}: {wall:.1f} s{versus}", flush=True)
        walls.append(wall)
        reports.append(report)
    print(f"-- {mode}{under}", *summarise(walls, reports), sep="\n")
    if floor:
        print(*check_lines(reports), sep="\n")
    return walls


def start_load(stack: ExitStack) -> str:
    """Burners started before the first run, stopped after the last (also on Ctrl-C or a failed run)."""
    burners = len(stack.enter_context(cpu_load()))
    print(f"[bench] load on: {burners} CPU burners (one per core, normal priority) for every run", flush=True)
    return f" under load ({burners} CPU burners)"


def main(argv: list[str] | None = None) -> int:
    args, extra = parse(argv)
    modes = {"serial": []} if args.serial_only else {"serial": [], "parallel": PARALLEL}
    walls: dict[str, list[float]] = {}
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="boundary-bench-")))
        under = start_load(stack) if args.load else ""
        for mode, options in modes.items():
            floor = not args.no_floor
            walls[mode] = run_mode(mode, args.runs, [*options, *extra], scratch, under, floor)
    if len(walls) == 2:
        speedup = statistics.median(walls["serial"]) / statistics.median(walls["parallel"])
        print(f"parallel ({' '.join(PARALLEL)}) is {speedup:.2f}× the serial speed (median wall time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
