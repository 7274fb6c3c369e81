"""The host checks, one record each: the probes it reads, how it is judged, its summary, whether it needs systemd.

Adding a check is one `HostCheck` in `HOST_CHECKS` (its probe functions in a module of their own, as
boundary/host/dbus.py): the probe process inside the host (boundary/host/inside.py) takes its probes,
and boundary/host/health.py judges, summarises and reports it from this record alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boundary.host.attempt import as_nobody, attempt
from boundary.host.dbus import bus_names
from boundary.host.dns import resolve_stub, resolve_system
from boundary.host.processes import listener_diff, listeners, process_diff, processes, resolver_running
from boundary.host.run_sockets import run_sockets, socket_diff
from boundary.host.services import service_problems, services

Sample = dict[str, Any]


@dataclass(frozen=True)
class Context:
    """What a judge may need beyond the two samples."""

    restarted_by_us: frozenset[str] = frozenset()  # systemd units the harness restarted itself
    units: tuple[str, ...] = ()  # systemd units whose failures and restarts are findings
    when: str = ""  # e.g. "after cross_job.job-a", for the text of a missing result


@dataclass(frozen=True)
class Probe:
    key: str  # its result's name in a sample
    take: Callable[[tuple[str, ...]], Any]  # run inside the host; given the watched systemd units
    shape: Callable[[Any], bool]  # a well-formed result; anything else is no result, which fails the check


@dataclass(frozen=True)
class HostCheck:
    name: str
    probes: tuple[Probe, ...]
    judge: Callable[[Sample, Sample, Context], str]  # what is wrong now, against the baseline ('' = held)
    summary: Callable[[Sample], str]  # one short line of what it saw: the report's before → after
    needs_systemd: bool = False  # only a host that runs systemd can run it (boundary/host/__init__.py)
    full_only: bool = False  # in full samples only: the watchdog's cheap ones lack its probes


def no_result_text(name: str, when: str) -> str:
    return f"the sample{f' ({when})' if when else ''} has no result for {name}"


def _is_attempt(result: Any) -> bool:
    """A probe's result as `attempt` gives it: ok with a value, or not ok with an error."""
    if not isinstance(result, dict):
        return False
    return (result.get("ok") is True and "value" in result) or (result.get("ok") is False and "error" in result)


def _as_root(key: str, probe: Callable[[], Any]) -> Probe:
    return Probe(key, lambda units: attempt(probe), _is_attempt)


def _as_nobody(key: str, probe: Callable[[], Any]) -> Probe:
    return Probe(key, lambda units: as_nobody(probe), _is_attempt)


def _attempts_failed(*keys: str) -> Callable[[Sample, Sample, Context], str]:
    """Judge: each of these probes that failed, with its error."""

    def judge(baseline: Sample, sample: Sample, context: Context) -> str:
        return "; ".join(f"{key}: {sample[key]['error']}" for key in keys if not sample[key]["ok"])

    return judge


def _bus_line(key: str) -> Callable[[Sample], str]:
    return lambda sample: f"{len(sample[key]['value'])} names" if sample[key]["ok"] else "refused"


def _dns_line(sample: Sample) -> str:
    probes = {"system": "dns_system", "nobody": "dns_nobody", "stub": "dns_stub"}
    return ", ".join(
        f"{label} {' '.join(sample[key]['value']) if sample[key]['ok'] else 'failed'}" for label, key in probes.items()
    )


def _resolver(baseline: Sample, sample: Sample, context: Context) -> str:
    return "" if sample["resolver"] else "systemd-resolved is not running"


def _services(baseline: Sample, sample: Sample, context: Context) -> str:
    """Every watched unit, and every unit of the baseline, needs a state in the sample to be judged held."""
    before, now = baseline.get("services"), sample["services"]
    if now is None:  # no systemd: not applicable, unless it answered at baseline
        return "" if before is None else no_result_text("services", context.when)
    wanted = dict.fromkeys([*context.units, *(before or {})])
    absent = [unit for unit in wanted if not isinstance(now.get(unit), dict)]
    if absent:
        return "; ".join(no_result_text(unit, context.when) for unit in absent)
    return service_problems(before, now, context.restarted_by_us)


def _services_line(sample: Sample) -> str:
    units = sample.get("services") or {}
    return ", ".join(
        f"{unit} {state.get('ActiveState', '?')} ({state.get('NRestarts', '?')} restarts)"
        for unit, state in units.items()
    )


def _listed(name: str, key: str, take: Callable[[], Any], diff: Callable[[Any, Any], str], empty: Any) -> HostCheck:
    """A check of what the host has of one kind (sockets, processes, listeners; `empty`: none of them, in the
    probe's own type): the report counts them, the judge is what changed since the baseline, as the kind's own
    diff says it. In full samples only."""
    probe = Probe(key, lambda units: take(), lambda value: isinstance(value, type(empty)))
    return HostCheck(
        name,
        (probe,),
        lambda baseline, sample, context: diff(baseline.get(key, empty), sample[key]),
        lambda sample: f"{len(sample[key])} {key}" if key in sample else "not sampled",
        full_only=True,
    )


HOST_CHECKS: tuple[HostCheck, ...] = (
    HostCheck(
        "system_bus_root",
        (_as_root("bus_root", bus_names),),
        _attempts_failed("bus_root"),
        _bus_line("bus_root"),
    ),
    HostCheck(
        "system_bus_nobody",
        (_as_nobody("bus_nobody", bus_names),),
        _attempts_failed("bus_nobody"),
        _bus_line("bus_nobody"),
    ),
    HostCheck(
        "dns",
        (
            _as_root("dns_system", resolve_system),
            _as_nobody("dns_nobody", resolve_system),
            _as_root("dns_stub", resolve_stub),
        ),
        _attempts_failed("dns_system", "dns_nobody", "dns_stub"),
        _dns_line,
    ),
    HostCheck(
        "resolver",
        (Probe("resolver", lambda units: resolver_running(), lambda value: isinstance(value, bool)),),
        _resolver,
        lambda sample: "running" if sample["resolver"] else "not running",
    ),
    HostCheck(
        "services",
        # None: no systemd in this host (said as not applicable, never held).
        (Probe("services", services, lambda value: value is None or isinstance(value, dict)),),
        _services,
        _services_line,
        needs_systemd=True,
    ),
    _listed("run_sockets", "sockets", run_sockets, socket_diff, {}),
    _listed("processes", "processes", processes, process_diff, []),
    _listed("listeners", "listeners", listeners, listener_diff, []),
)
