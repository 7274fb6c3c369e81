"""Host health around the jobs: a baseline, a watchdog while jobs run, a full check after each.

Each check compares with the baseline and remembers when it first failed, so
the report can tell a chain in order (sockets chmod'ed → bus refused for
others → resolver gone after its restart → DNS dead).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boundary
from boundary.host.base import Host, HostError
from boundary.host.inside import INSIDE_MARK
from boundary.host.processes import listener_diff, process_diff
from boundary.host.run_sockets import socket_diff
from boundary.host.services import DEFAULT_UNITS, service_problems

WATCH_INTERVAL_S = 0.5
PROBER_EXIT_S = 10.0
CHECKS = (
    "system_bus_root",
    "system_bus_nobody",
    "dns",
    "resolver",
    "services",
    "run_sockets",
    "processes",
    "listeners",
)
NO_SYSTEMD = "no systemd runs in this host, so no service state to read; --host container runs systemd"


@dataclass
class Failure:
    check: str
    at: float
    when: str  # e.g. "after cross_job.job-a", "watchdog during cross_job.job-b"
    detail: str


@dataclass
class HostHealth:
    host: Host
    units: tuple[str, ...] = DEFAULT_UNITS  # systemd units whose restarts and failures are findings
    baseline: dict[str, Any] | None = None
    samples: int = 0
    failures: dict[str, Failure] = field(default_factory=dict)  # the first failure of each check
    last: dict[str, Any] | None = None
    durations_s: dict[str, list[float]] = field(default_factory=lambda: {"cheap": [], "full": []})
    watched_s: float = 0.0  # how long the watchdog ran: its cost is the cheap samples' share of this
    restarted_by_us: set[str] = field(default_factory=set)  # units the harness restarted (a new invocation is ours)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _prober: subprocess.Popen[str] | None = None
    _probe_lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, when: str, full: bool = True) -> dict[str, Any]:
        started = time.monotonic()
        sample = self._sample(full)
        self.durations_s["full" if full else "cheap"].append(time.monotonic() - started)
        with self._lock:
            self.samples += 1
            if self.baseline is None:
                self.baseline = sample
                for check, detail in judge(sample, sample, full=full, units=self.units, when="at baseline").items():
                    self._fail(check, sample["at"], "at baseline", detail)
            else:
                self.last = sample if full else self.last
                restarted = frozenset(self.restarted_by_us)
                found = judge(self.baseline, sample, restarted, full=full, units=self.units, when=when)
                for check, detail in found.items():
                    self._fail(check, sample["at"], when, detail)
        return sample

    def _fail(self, check: str, at: float, when: str, detail: str) -> None:
        self.failures.setdefault(check, Failure(check, at, when, detail))

    def _sample(self, full: bool) -> dict[str, Any]:
        """One line to the probe process inside the host, one JSON sample back."""
        with self._probe_lock:
            prober = self._prober or self._start_prober()
            assert prober.stdin is not None and prober.stdout is not None
            prober.stdin.write("full\n" if full else "cheap\n")
            prober.stdin.flush()
            line = prober.stdout.readline()
        if not line:
            raise RuntimeError(f"the host probe inside {self.host.name} died (exit {prober.poll()})")
        return dict(json.loads(line))

    def _start_prober(self) -> subprocess.Popen[str]:
        # Inside a host the working directory is its root: name where this very package lives.
        package_root = Path(boundary.__file__).resolve().parents[1]
        env = ["env", f"{INSIDE_MARK}=1", f"PYTHONPATH={package_root}"]
        probe = [sys.executable, "-m", "boundary.host.inside", "--serve", "--units", ",".join(self.units)]
        argv = [*self.host.enter(), *env, *probe]
        self._prober = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        return self._prober

    def close(self) -> None:
        prober, self._prober = self._prober, None
        if prober is None:
            return
        try:
            prober.communicate(timeout=PROBER_EXIT_S)  # EOF on stdin ends it
        except subprocess.TimeoutExpired:
            prober.kill()
            prober.communicate()
            raise HostError(
                f"expected the host probe inside {self.host.name} to exit within {PROBER_EXIT_S:g} s of its input "
                "closing; it was still probing, so it was killed. Fix: a probe hangs inside the host; "
                "run `python -m boundary.host.inside` there by hand to see which"
            ) from None

    @contextmanager
    def watching(self, when: str) -> Iterator[None]:
        """Sample the cheap probes a couple of times a second while a job runs."""
        stop = threading.Event()
        thread = threading.Thread(target=self._watch, args=(stop, when), name="host-watchdog", daemon=True)
        thread.start()
        started = time.monotonic()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.watched_s += time.monotonic() - started

    def _watch(self, stop: threading.Event, when: str) -> None:
        while not stop.wait(WATCH_INTERVAL_S):
            self.take(f"watchdog during {when}", full=False)

    def chain(self) -> list[Failure]:
        return sorted(self.failures.values(), key=lambda failure: failure.at)


def judge(
    baseline: dict[str, Any],
    sample: dict[str, Any],
    restarted_by_us: frozenset[str] = frozenset(),
    *,
    full: bool = True,
    units: tuple[str, ...] = (),
    when: str = "",
) -> dict[str, str]:
    """check -> what is wrong, for every check that fails in `sample` (compared with `baseline`).

    A check whose result the sample lacks fails: a probe that said nothing proves nothing held.
    A cheap (watchdog) sample has no /run, process or port results; a full one must.
    """
    checks = [check for check in CHECKS if full or check not in FULL_ONLY]
    problems = {check: _no_result(check, sample, when) for check in checks}
    for check in checks:
        if problems[check]:
            continue
        if check == "services":
            problems[check] = _services(baseline, sample, restarted_by_us, units, when)
        else:
            problems[check] = JUDGES[check](baseline, sample)
    return {check: detail for check, detail in problems.items() if detail}


def _services(
    baseline: dict[str, Any], sample: dict[str, Any], restarted_by_us: frozenset[str], units: tuple[str, ...], when: str
) -> str:
    """Every watched unit, and every unit of the baseline, needs a state in the sample to be judged held."""
    before, now = baseline.get("services"), sample["services"]
    if now is None:  # no systemd: not applicable, unless it answered at baseline
        return "" if before is None else _no_result_text("services", when)
    absent = [unit for unit in dict.fromkeys([*units, *(before or {})]) if not isinstance(now.get(unit), dict)]
    if absent:
        return "; ".join(_no_result_text(unit, when) for unit in absent)
    return service_problems(before, now, restarted_by_us)


def _no_result(check: str, sample: dict[str, Any], when: str) -> str:
    """What the sample lacks for this check ('' when every result it needs is there, well-formed)."""
    absent = [key for key in PROBES[check] if not SHAPES[key](sample.get(key, _ABSENT))]
    return "; ".join(_no_result_text(key, when) for key in absent)


def _no_result_text(name: str, when: str) -> str:
    return f"the sample{f' ({when})' if when else ''} has no result for {name}"


def _is_probe(result: Any) -> bool:
    """A probe's result: ok with a value, or not ok with an error."""
    if not isinstance(result, dict):
        return False
    return (result.get("ok") is True and "value" in result) or (result.get("ok") is False and "error" in result)


_ABSENT = object()
# check -> the sample's results it reads; each result's expected shape.
PROBES: dict[str, tuple[str, ...]] = {
    "system_bus_root": ("bus_root",),
    "system_bus_nobody": ("bus_nobody",),
    "dns": ("dns_system", "dns_nobody", "dns_stub"),
    "resolver": ("resolver",),
    "services": ("services",),
    "run_sockets": ("sockets",),
    "processes": ("processes",),
    "listeners": ("listeners",),
}
SHAPES: dict[str, Callable[[Any], bool]] = {
    "bus_root": _is_probe,
    "bus_nobody": _is_probe,
    "dns_system": _is_probe,
    "dns_nobody": _is_probe,
    "dns_stub": _is_probe,
    "resolver": lambda value: isinstance(value, bool),
    "services": lambda value: value is None or isinstance(value, dict),  # None: no systemd in this host
    "sockets": lambda value: isinstance(value, dict),
    "processes": lambda value: isinstance(value, list),
    "listeners": lambda value: isinstance(value, list),
}
FULL_ONLY = frozenset({"run_sockets", "processes", "listeners"})


def not_applicable(baseline: dict[str, Any] | None) -> dict[str, str]:
    """check -> why this host cannot run it (said in the report, never counted as held)."""
    return {"services": NO_SYSTEMD} if baseline is not None and baseline.get("services") is None else {}


def _probe(name: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    def judge_probe(baseline: dict[str, Any], sample: dict[str, Any]) -> str:
        result = sample[name]
        return "" if result["ok"] else f"{name}: {result['error']}"

    return judge_probe


def _dns(baseline: dict[str, Any], sample: dict[str, Any]) -> str:
    probes = ("dns_system", "dns_nobody", "dns_stub")
    return "; ".join(f"{name}: {sample[name]['error']}" for name in probes if not sample[name]["ok"])


def _resolver(baseline: dict[str, Any], sample: dict[str, Any]) -> str:
    return "" if sample["resolver"] else "systemd-resolved is not running"


JUDGES: dict[str, Callable[[dict[str, Any], dict[str, Any]], str]] = {
    "system_bus_root": _probe("bus_root"),
    "system_bus_nobody": _probe("bus_nobody"),
    "dns": _dns,
    "resolver": _resolver,
    "run_sockets": lambda baseline, sample: socket_diff(baseline.get("sockets", {}), sample["sockets"]),
    "processes": lambda baseline, sample: process_diff(baseline.get("processes", []), sample["processes"]),
    "listeners": lambda baseline, sample: listener_diff(baseline.get("listeners", []), sample["listeners"]),
}


def _bus_line(probe: dict[str, Any]) -> str:
    return f"{len(probe['value'])} names" if probe["ok"] else "refused"


def _dns_line(sample: dict[str, Any]) -> str:
    probes = {"system": "dns_system", "nobody": "dns_nobody", "stub": "dns_stub"}
    return ", ".join(
        f"{label} {' '.join(sample[key]['value']) if sample[key]['ok'] else 'failed'}" for label, key in probes.items()
    )


def _services_line(sample: dict[str, Any]) -> str:
    units = sample.get("services") or {}
    return ", ".join(
        f"{unit} {state.get('ActiveState', '?')} ({state.get('NRestarts', '?')} restarts)"
        for unit, state in units.items()
    )


def _count(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda sample: f"{len(sample[key])} {key}" if key in sample else "not sampled"


SUMMARIES: dict[str, Callable[[dict[str, Any]], str]] = {
    "system_bus_root": lambda sample: _bus_line(sample["bus_root"]),
    "system_bus_nobody": lambda sample: _bus_line(sample["bus_nobody"]),
    "dns": _dns_line,
    "resolver": lambda sample: "running" if sample["resolver"] else "not running",
    "services": _services_line,
    "run_sockets": _count("sockets"),
    "processes": _count("processes"),
    "listeners": _count("listeners"),
}


def summarize(check: str, sample: dict[str, Any] | None) -> str:
    """One short line of what a check saw in a sample: the report's before → after."""
    if sample is None:
        return "not sampled"
    return "no result" if _no_result(check, sample, "") else SUMMARIES[check](sample)


def checks_for(mode: str) -> tuple[str, ...]:
    """The checks a kind of host can run: a namespace host has no systemd, so no services."""
    return tuple(check for check in CHECKS if not (mode == "namespace" and check == "services"))


def host_report(mode: str, boot_s: float, health: HostHealth) -> dict[str, Any]:
    """The host section of the JSON report: each check's before → after and first failure, the failures in order."""
    started = health.baseline["at"] if health.baseline else 0.0
    skipped = not_applicable(health.baseline)
    checks = {
        check: {
            **_check_report(health.failures.get(check), started),
            "before": summarize(check, health.baseline),
            "after": summarize(check, health.last),
        }
        for check in CHECKS
        if check not in skipped
    }
    chain = [f"+{f.at - started:.1f} s {f.when}: {f.check}: {f.detail}" for f in health.chain()]
    return {
        "mode": mode,
        "boot_s": round(boot_s, 3),
        "samples": health.samples,
        "cost": sampling_cost(health),
        "checks": checks,
        "not_checked": skipped,
        "chain": chain,
    }


def sampling_cost(health: HostHealth) -> dict[str, float]:
    """Median time of a cheap (watchdog) and a full sample, and the share of job time spent sampling."""
    cheap, full = health.durations_s["cheap"], health.durations_s["full"]
    return {
        "cheap_sample_ms": round(statistics.median(cheap) * 1000, 1) if cheap else 0.0,
        "full_sample_ms": round(statistics.median(full) * 1000, 1) if full else 0.0,
        "watchdog_share": round(sum(cheap) / health.watched_s, 3) if health.watched_s else 0.0,
    }


def _check_report(failure: Failure | None, started: float) -> dict[str, Any]:
    if failure is None:
        return {"ok": True}
    return {
        "ok": False,
        "first_failed": failure.when,
        "after_s": round(failure.at - started, 2),
        "detail": failure.detail,
    }
