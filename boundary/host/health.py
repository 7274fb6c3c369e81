"""Host health around the jobs: a baseline, a watchdog while jobs run, a full check after each.

Each check (one record in boundary/host/checks.py) compares with the baseline and remembers when it
first failed, so the report can tell a chain in order (sockets chmod'ed → bus refused for
others → resolver gone after its restart → DNS dead).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boundary
from boundary.host import HOST_KINDS
from boundary.host.base import Host, HostError
from boundary.host.checks import HOST_CHECKS, Context, HostCheck, Sample, no_result_text
from boundary.host.inside import INSIDE_MARK
from boundary.host.properties import HOST_PROPERTIES
from boundary.host.services import DEFAULT_UNITS

WATCH_INTERVAL_S = 0.5
PROBER_EXIT_S = 10.0
BY_NAME: dict[str, HostCheck] = {check.name: check for check in HOST_CHECKS}
CHECKS = tuple(BY_NAME)  # every check's name, in the order reports list them
# The disposable kinds that run systemd: where a check that needs it can run (the live host is this machine).
WITH_SYSTEMD = " or ".join(
    f"--host {kind.name}" for kind in HOST_KINDS.values() if kind.runs_systemd and kind.disposable
)
NO_SYSTEMD = f"no systemd runs in this host, so no service state to read; {WITH_SYSTEMD} runs systemd"


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
    baseline: Sample,
    sample: Sample,
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
    context = Context(restarted_by_us, units, when)
    found = {
        check.name: _no_result(check, sample, when) or check.judge(baseline, sample, context)
        for check in HOST_CHECKS
        if full or not check.full_only
    }
    return {check: detail for check, detail in found.items() if detail}


def _no_result(check: HostCheck, sample: Sample, when: str) -> str:
    """What the sample lacks for this check ('' when every result it needs is there, well-formed)."""
    absent = [probe.key for probe in check.probes if not probe.shape(sample.get(probe.key, _ABSENT))]
    return "; ".join(no_result_text(key, when) for key in absent)


_ABSENT = object()


def not_applicable(baseline: Sample | None) -> dict[str, str]:
    """check -> why this host cannot run it (said in the report, never counted as held)."""
    no_systemd = baseline is not None and baseline.get("services") is None  # the services probe's "no systemd"
    return {check.name: NO_SYSTEMD for check in HOST_CHECKS if check.needs_systemd and no_systemd}


def summarize(check: str, sample: Sample | None) -> str:
    """One short line of what a check saw in a sample: the report's before → after."""
    if sample is None:
        return "not sampled"
    record = BY_NAME[check]
    return "no result" if _no_result(record, sample, "") else record.summary(sample)


def checks_for(mode: str) -> tuple[str, ...]:
    """The checks a kind of host must answer, by what it can do: one that runs no systemd has no `services`.

    A kind this harness does not know is asked for every check: absent evidence is no pass.
    """
    kind = HOST_KINDS.get(mode)
    runs_systemd = kind is None or kind.runs_systemd
    return tuple(check.name for check in HOST_CHECKS if runs_systemd or not check.needs_systemd)


def host_report(mode: str, boot_s: float, health: HostHealth) -> dict[str, Any]:
    """The host section of the JSON report: each check's before → after and first failure, the failures in order,
    and the host's properties (reported, never judged)."""
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
        "properties": host_properties(health.baseline, health.last),
    }


def host_properties(baseline: Sample | None, last: Sample | None) -> dict[str, dict[str, Any]]:
    """name -> its value at baseline and what that means; `after` too when the jobs' end saw another value."""
    found: dict[str, dict[str, Any]] = {}
    for prop in HOST_PROPERTIES:
        if baseline is None or prop.key not in baseline:
            continue  # not sampled: nothing to say
        value = baseline[prop.key]
        found[prop.name] = {"value": value, "meaning": prop.meaning(value)}
        if last is not None and prop.key in last and last[prop.key] != value:
            found[prop.name]["after"] = last[prop.key]
    return found


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
