"""The sweep reads what it found in full: the shell sweeps from the files B wrote, the grep tool's whole result."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boundary.model.record import JobRecord
from boundary.scenarios.sweep.places import SWEEP_OUTPUT
from boundary.scenarios.sweep.search import ProcessView, controls_of, found_by

OWN, SECRET = "BOUNDARY-own", "BOUNDARY-secret"


def _runner(full: Any) -> Any:
    return SimpleNamespace(agent=SimpleNamespace(full_result=full))


def test_the_shell_sweeps_are_read_from_the_files_b_wrote(tmp_path: Path) -> None:
    """However little of a long output the agent showed the model, the file holds all of it."""
    (tmp_path / f"{SWEEP_OUTPUT}shell_sweep").write_text("\n".join(["noise"] * 80_000 + [OWN]))
    (tmp_path / f"{SWEEP_OUTPUT}proc_sweep").write_text(f"/proc/1/environ:{SECRET}\n")
    record = JobRecord("job-b", results={"shell_sweep": "…truncated", "grep_control": OWN, "grep_tool": ""})
    found = found_by(_runner(lambda shown: shown), record, SimpleNamespace(checkout=tmp_path), ProcessView([]))  # type: ignore[arg-type]
    controls = controls_of(found, record, OWN, SECRET, lambda shown: shown)
    assert {k: controls[k] for k in ("shell_sweep", "grep_tool", "proc_sweep")} == dict.fromkeys(
        ("shell_sweep", "grep_tool", "proc_sweep")
    )


def test_a_sweep_that_wrote_nothing_fails_its_control(tmp_path: Path) -> None:
    record = JobRecord("job-b", results={"grep_control": "…truncated"})
    found = found_by(
        _runner(lambda shown: shown + "\n" + OWN), record, SimpleNamespace(checkout=tmp_path), ProcessView([])
    )  # type: ignore[arg-type]
    controls = controls_of(found, record, OWN, SECRET, lambda shown: shown + "\n" + OWN)
    assert controls["shell_sweep"] == "control failed: shell_sweep did not find the job's own canary"
    assert controls["proc_sweep"] == "control failed: proc_sweep did not find the job's own canary"
    assert controls["grep_tool"] is None  # found in the part the agent saved aside
