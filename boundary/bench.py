"""`just bench`: run the live suite N times and report where the time goes.

Wall time (min / median / max), the agents' own time (the jobs' wall time),
the harness's overhead as a share of wall time, and the scripted model's
latency per request (p50 / p99), all read from the runs' JSON reports.
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


def summarise(walls: list[float], reports: list[dict[str, Any]]) -> list[str]:
    agent = [sum(job["wall_s"] for job in report["jobs"]) for report in reports]
    overhead = [(wall - own) / wall for wall, own in zip(walls, agent, strict=True)]
    latencies = [x for report in reports for job in report["jobs"] for x in job.get("model_latencies_s", [])]
    probes = [sum(1 for r in report["results"] if r["channel"] != "job_output") for report in reports]
    return [
        f"runs: {len(walls)}, probes per run: {probes[0]}, jobs per run: {len(reports[0]['jobs'])}",
        f"wall time:   min {min(walls):.1f} s, median {statistics.median(walls):.1f} s, max {max(walls):.1f} s",
        f"agents' own: median {statistics.median(agent):.1f} s (sum of job wall times)",
        f"overhead:    median {statistics.median(overhead):.0%} of wall time (pytest start, setup, planting, verdicts)",
        f"model server: {len(latencies)} requests, p50 {percentile(latencies, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:.1f} ms",
        *host_lines(reports),
    ]


def host_lines(reports: list[dict[str, Any]]) -> list[str]:
    """What the host under test costs: boot, one cheap and one full sample, the watchdog's share of job time."""
    hosts = [report["host"] for report in reports if report.get("host") and "cost" in report["host"]]
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
    args = parser.parse_args(argv)
    walls, reports = [], []
    with tempfile.TemporaryDirectory(prefix="boundary-bench-") as scratch:
        for index in range(args.runs):
            wall, report = run_once(Path(scratch) / f"run-{index}.json", args.extra)
            print(f"[bench] run {index + 1}/{args.runs}: {wall:.1f} s", flush=True)
            walls.append(wall)
            reports.append(report)
    print("\n".join(summarise(walls, reports)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
