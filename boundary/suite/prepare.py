"""Around the live suite's scenarios: the preflight, the run's work directory, and progress lines.

boundary/suite/plugin.py calls these from its hooks and fixtures; none of them reads pytest's stash.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from boundary import beacon, canary
from boundary.doctor import checks as doctor
from boundary.host.container import reap_containers
from boundary.report.record import RunRecord
from boundary.scenarios import probe_batches, registry
from boundary.toolchain import tools
from boundary.verdict import HARNESS_NOTE

WORKDIR_PREFIX = "bnd-run-"  # short: a runner's paths under it may hold Unix sockets (107 bytes at most)
KEPT_MARKER = "KEPT"  # in a work directory kept with --boundary-keep: never reaped


def preflight(record: RunRecord, sandboxes: Iterable[str]) -> str:
    """Install the pinned tools and run the doctor's checks ('' when all pass); the record keeps what failed."""
    try:
        tools.install_all()
    except tools.ToolsError as error:
        record.errors.append(f"cannot install the pinned tools: {error}")
        return record.errors[-1]
    # The host is not tried here: each scenario boots its own next and fails the same way if it cannot.
    for sandbox in dict.fromkeys(sandboxes):
        problem = doctor.first_problem(doctor.run_checks(sandbox, host=None))
        if problem:
            record.errors.append(problem)
            return problem
    record.preflight_passed = True
    return ""


# Words the harness itself puts in what a job gets back and in what it reads, besides each scenario's own (its
# `wording`): a layer's declared denial text found in any of them would read the harness's words as its refusal.
HARNESS_WORDING = (probe_batches.BEGIN, probe_batches.END, HARNESS_NOTE, canary.PREFIX, beacon.REPORT_PREFIX)


def harness_wording() -> tuple[str, ...]:
    return (*HARNESS_WORDING, *(words for scenario in registry().values() for words in scenario.wording))


def wording_problem(runner: str, denials: dict[str, tuple[str, ...]]) -> str | None:
    """Why a runner's declared denial texts cannot be trusted before any job runs: one is part of the harness's own
    wording (a text as broad as 'boundary' or a single letter); None when none is."""
    for layer, texts in denials.items():
        for text in texts:
            words = next((words for words in harness_wording() if text in words), None)
            if words is not None:
                return (
                    f"runner {runner}: layer {layer!r} declares the denial text {text!r}, which occurs in boundary's "
                    f"own wording ({words!r}): it would read the harness's words as that layer's refusal. Declare "
                    "the layer's own refusal text (e.g. 'Operation not permitted', its plugin's message)"
                )
    return None


def make_workdir(pid: int) -> Path:
    """This process's work directory: traversable, not listable, since a runner may run jobs as users of their own."""
    workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{pid}-"))
    workdir.chmod(0o711)
    return workdir


def keep_or_remove(workdir: Path, keep: bool) -> None:
    if keep:
        (workdir / KEPT_MARKER).touch()  # later runs reap only what a killed run left
        print(f"\n[boundary] work directory kept: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def reap_leftovers(progress: Callable[[str], None]) -> None:
    """Remove what earlier runs whose process is gone (killed mid-run) left: what each scenario left outside its work
    directory (a sweep's canaries, read from the work directories, so first), the work directories, host
    containers."""
    for scenario in registry().values():
        scenario.remove_leftovers(progress)
    reap_containers()
    for leftover in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        pid = leftover.name.removeprefix(WORKDIR_PREFIX).split("-")[0]
        kept = (leftover / KEPT_MARKER).exists()
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and not kept:
            shutil.rmtree(leftover, ignore_errors=True)


def progress_writer(config: pytest.Config) -> Callable[[str], None]:
    """Job start/finish lines straight to the terminal, past output capture, so a long job never looks hung."""
    # An xdist worker's terminal reporter writes into a file of execnet's (its stdout is the channel to the
    # controller); its stderr is the run's, once capture lets go of it.
    reporter = None if hasattr(config, "workerinput") else config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")

    def write(message: str) -> None:
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            if reporter is not None:
                reporter.write_line(message)
            else:
                print(message, file=sys.stderr, flush=True)

    return write
