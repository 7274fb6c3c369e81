"""The sweep's controls read each result in full, as its probes do (found under load, reproduced with noise)."""

from __future__ import annotations

from boundary.model.record import JobRecord
from boundary.scenarios.sweep import _controls

OWN, SECRET = "BOUNDARY-own", "BOUNDARY-secret"


def test_a_control_found_only_in_the_saved_aside_output_holds() -> None:
    """A large sweep output is truncated for the model; B's own line may be in the part saved aside."""
    record = JobRecord("job-b", results={"shell_sweep": "…truncated", "grep_control": OWN, "proc_sweep": SECRET})
    controls = _controls(record, OWN, SECRET, lambda shown: shown + ("\n" + OWN if "truncated" in shown else ""))
    assert controls == {"shell_sweep": None, "grep_tool": None, "proc_sweep": None}


def test_a_control_found_nowhere_fails() -> None:
    record = JobRecord("job-b", results={"shell_sweep": "…truncated", "grep_control": OWN})
    controls = _controls(record, OWN, SECRET, lambda shown: shown)
    assert controls["shell_sweep"] == "control failed: shell_sweep did not find the job's own canary"
    assert controls["proc_sweep"] == "control for proc_sweep never ran"
