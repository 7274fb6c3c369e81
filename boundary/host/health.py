"""Host health around the jobs: a baseline, a watchdog while jobs run, a full check after each.

Each check compares with the baseline and remembers when it first failed, so
the report can tell a chain in order (sockets chmod'ed → bus refused for
others → resolver gone after its restart → DNS dead).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boundary
from boundary.host.base import Host
from boundary.host.inside import INSIDE_MARK

WATCH_INTERVAL_S = 0.5
CHECKS = ("system_bus_root", "system_bus_nobody", "dns", "resolver", "run_sockets", "processes")


@dataclass
class Failure:
    check: str
    at: float
    when: str  # e.g. "after cross_job.job-a", "watchdog during cross_job.job-b"
    detail: str


@dataclass
class HostHealth:
    host: Host
    baseline: dict[str, Any] | None = None
    samples: int = 0
    failures: dict[str, Failure] = field(default_factory=dict)  # the first failure of each check
    last: dict[str, Any] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _prober: subprocess.Popen[str] | None = None
    _probe_lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, when: str, full: bool = True) -> dict[str, Any]:
        sample = self._sample(full)
        with self._lock:
            self.samples += 1
            if self.baseline is None:
                self.baseline = sample
                for check, detail in judge(sample, sample).items():
                    self._fail(check, sample["at"], "at baseline", detail)
            else:
                self.last = sample if full else self.last
                for check, detail in judge(self.baseline, sample).items():
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
        argv = [*self.host.enter(), *env, sys.executable, "-m", "boundary.host.inside", "--serve"]
        self._prober = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        return self._prober

    def close(self) -> None:
        if self._prober is not None:
            self._prober.communicate(timeout=10)  # EOF on stdin ends it
            self._prober = None

    @contextmanager
    def watching(self, when: str) -> Iterator[None]:
        """Sample the cheap probes a couple of times a second while a job runs."""
        stop = threading.Event()
        thread = threading.Thread(target=self._watch, args=(stop, when), name="host-watchdog", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _watch(self, stop: threading.Event, when: str) -> None:
        while not stop.wait(WATCH_INTERVAL_S):
            self.take(f"watchdog during {when}", full=False)

    def chain(self) -> list[Failure]:
        return sorted(self.failures.values(), key=lambda failure: failure.at)


def judge(baseline: dict[str, Any], sample: dict[str, Any]) -> dict[str, str]:
    """check -> what is wrong, for every check that fails in `sample` (compared with `baseline`)."""
    problems = {check: judge_one(baseline, sample) for check, judge_one in JUDGES.items()}
    if "sockets" in sample:
        problems["run_sockets"] = socket_diff(baseline.get("sockets", {}), sample["sockets"])
        problems["processes"] = process_diff(baseline.get("processes", []), sample["processes"])
    return {check: detail for check, detail in problems.items() if detail}


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
}


def socket_diff(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> str:
    """Every socket under /run whose mode, owner or ACL changed, or that vanished or appeared."""
    changes = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old is None or new is None:
            changes.append(f"{path} {'appeared' if old is None else 'vanished'}")
        else:  # not the inode: a service restart recreates its sockets; a chmod or an ACL keeps it
            changed = [f"{key} {old[key]}→{new[key]}" for key in ("mode", "uid", "gid", "acl") if old[key] != new[key]]
            changes += [f"{path}: {', '.join(changed)}"] if changed else []
    return "; ".join(changes)


def process_diff(before: list[str], after: list[str]) -> str:
    """Processes left in the host that were not there at baseline (compared by name: a restart changes pids)."""
    remaining = [entry.split(" ", 1)[1] for entry in before]
    left = []
    for entry in after:
        name = entry.split(" ", 1)[1]
        if name in remaining:
            remaining.remove(name)
        else:
            left.append(entry)
    return f"left running: {', '.join(left)}" if left else ""


def host_report(mode: str, boot_s: float, health: HostHealth) -> dict[str, Any]:
    """The host section of the JSON report: each check's first failure, and the failures in the order seen."""
    started = health.baseline["at"] if health.baseline else 0.0
    checks = {check: _check_report(health.failures.get(check), started) for check in CHECKS}
    chain = [f"+{f.at - started:.1f} s {f.when}: {f.check}: {f.detail}" for f in health.chain()]
    return {"mode": mode, "boot_s": round(boot_s, 3), "samples": health.samples, "checks": checks, "chain": chain}


def _check_report(failure: Failure | None, started: float) -> dict[str, Any]:
    if failure is None:
        return {"ok": True}
    return {
        "ok": False,
        "first_failed": failure.when,
        "after_s": round(failure.at - started, 2),
        "detail": failure.detail,
    }
