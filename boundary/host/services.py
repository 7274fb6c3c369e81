"""systemd services of the host: a restart or a failure during the jobs is a finding (incident 3).

Read with `systemctl show` over systemd's private socket (root only, never chmod'ed by incident 3),
so the check works while the system bus is broken. Judged on ActiveState, Result and NRestarts,
never on log text: the journal's sockets are chmod'ed too.
"""

from __future__ import annotations

import os
from typing import Any

from boundary import proc

DEFAULT_UNITS = ("dbus.service", "systemd-resolved.service")
PROPERTIES = ("Id", "LoadState", "ActiveState", "SubState", "Result", "NRestarts", "InvocationID")


def systemd_runs() -> bool:
    return os.path.isdir("/run/systemd/system")  # what sd_booted(3) checks


def services(units: tuple[str, ...] = DEFAULT_UNITS) -> dict[str, dict[str, str]] | None:
    """unit -> its state properties; None where systemd is not PID 1 (nothing to ask)."""
    if not systemd_runs():
        return None
    argv = ["systemctl", "show", f"--property={','.join(PROPERTIES)}", "--", *units]
    try:
        done = proc.run(argv, timeout=5, what="systemd to show the watched units")
    except proc.ProcTimeout as error:  # a probe that hangs is a failed probe, not a dead prober
        return {unit: {"error": error.problem} for unit in units}
    if done.returncode != 0:
        return {unit: {"error": done.stderr.strip() or f"systemctl exited {done.returncode}"} for unit in units}
    blocks = [
        dict(line.split("=", 1) for line in block.splitlines() if "=" in line) for block in done.stdout.split("\n\n")
    ]
    shown = dict(zip(units, blocks, strict=False))  # systemctl answers in the order asked
    missing = {"error": f"`systemctl show` gave no properties for it ({len(blocks)} blocks for {len(units)} units)"}
    return {unit: shown.get(unit) or missing for unit in units}


def service_problems(
    baseline: dict[str, Any] | None, sample: dict[str, Any] | None, restarted_by_us: frozenset[str] = frozenset()
) -> str:
    """Every unit that is not active, was not found, or was restarted since the baseline.

    A restart shows as NRestarts (systemd's Restart=) or as a new InvocationID (anything else, e.g. a bus
    killed and socket-activated again); units the harness restarted itself are judged on their state only.
    """
    if sample is None:
        return ""
    problems = [
        _unit_problem(unit, (baseline or {}).get(unit, {}), state, unit in restarted_by_us)
        for unit, state in sample.items()
    ]
    return "; ".join(problem for problem in problems if problem)


def _unit_problem(unit: str, before: dict[str, str], state: dict[str, str], restarted_by_us: bool) -> str:
    if "error" in state:
        return f"{unit}: cannot read its state: {state['error']}"
    if state.get("LoadState") != "loaded":
        return f"{unit}: {state.get('LoadState', 'unknown')}"
    if state.get("ActiveState") != "active":
        return f"{unit}: {state.get('ActiveState')} (Result={state.get('Result')})"
    restarts = int(state.get("NRestarts", 0)) - int(before.get("NRestarts", 0))
    if restarts > 0:
        return f"{unit}: restarted {restarts}× by systemd (Result={state.get('Result')})"
    if not restarted_by_us and before.get("InvocationID") not in (None, state.get("InvocationID")):
        return f"{unit}: restarted since the baseline (a new invocation, not by its Restart= policy)"
    return ""
