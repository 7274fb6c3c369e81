"""`just bench`: run the live suite N times, serially and in parallel, and report where the time goes.

Wall time (min / median / max) for each mode side by side, the agents' own time
(the jobs' wall time), the harness's overhead as a share of wall time, and the
scripted model's latency per request (p50 / p99), all read from the runs' JSON
reports. `just soak` runs the same loop and stops at the first run that fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"


def run_once(report: Path, extra: list[str]) -> tuple[float, dict[str, Any]]:
    command = [sys.executable, "-m", "pytest", str(SCENARIOS), "-q", "-p", "no:cacheprovider"]
    started = time.monotonic()
    result = subprocess.run([*command, "--boundary-report", str(report), *extra], capture_output=True, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0 or not report.exists():
        raise SystemExit(
            f"bench: the live suite failed (exit {result.returncode}); fix it first:\n{result.stdout[-2000:]}"
        )
    return wall, json.loads(report.read_text())


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] if ordered else float("nan")


PARALLEL = ["-n", "2", "--dist", "loadgroup"]  # a worker per core of the reference machine; a scenario per worker


def _parts(report: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [item for scenario in (report.get("scenarios") or {}).values() for item in scenario.get(key) or []]


def summarise(walls: list[float], reports: list[dict[str, Any]]) -> list[str]:
    agent = [sum(job["wall_s"] for job in _parts(report, "jobs")) for report in reports]
    overhead = [(wall - own) / wall for wall, own in zip(walls, agent, strict=True)]
    latencies = [x for report in reports for job in _parts(report, "jobs") for x in job.get("model_latencies_s", [])]
    probes = len(_parts(reports[0], "results"))
    return [
        f"runs: {len(walls)}, probes per run: {probes}, jobs per run: {len(_parts(reports[0], 'jobs'))}",
        f"wall time:   min {min(walls):.1f} s, median {statistics.median(walls):.1f} s, max {max(walls):.1f} s",
        f"agents' own: median {statistics.median(agent):.1f} s (sum of job wall times)",
        f"overhead:    median {statistics.median(overhead):.0%} of wall time (pytest start, setup, planting, verdicts)",
        f"model server: {len(latencies)} requests, p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms",
        *host_lines(reports),
    ]


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="boundary-bench", description=__doc__)
    parser.add_argument("runs", nargs="?", type=int, default=5)
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="more options for the live suite")
    parser.add_argument("--serial-only", action="store_true", help="skip the parallel runs (as `just soak` does)")
    args = parser.parse_args(argv)
    modes = {"serial": []} if args.serial_only else {"serial": [], "parallel": PARALLEL}
    walls: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="boundary-bench-") as scratch:
        for mode, options in modes.items():
            reports = []
            for index in range(args.runs):
                wall, report = run_once(Path(scratch) / f"{mode}-{index}.json", [*options, *args.extra])
                print(f"[bench] {mode} run {index + 1}/{args.runs}: {wall:.1f} s", flush=True)
                walls.setdefault(mode, []).append(wall)
                reports.append(report)
            print(f"-- {mode}", *summarise(walls[mode], reports), sep="\n")
    if len(walls) == 2:
        speedup = statistics.median(walls["serial"]) / statistics.median(walls["parallel"])
        print(f"parallel ({' '.join(PARALLEL)}) is {speedup:.2f}× the serial speed (median wall time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
