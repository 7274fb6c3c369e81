"""Live controls for the whole host (issue 42): a runner's verbs write outside STATE, and the run looks there.

Each sabotaged runner is the Claude Code example runner (examples/runners/claude), a command, with one mistake real
runners make, in a few lines of bash in front of it: it keeps a removed job's data under /var/log "for the audit log",
or packs it into a .tar.gz under /var/tmp, or keeps the account key also in a file under /etc where "its service"
reads it. Each must fail the default run with a named cell and the path in its detail, and leave nothing on this
machine: the verbs ran on the namespace host's own root, whose writes go with it.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from live import run_suite
from paths import ROOT

from boundary.sabotage.whole_host import AUDIT_LOG, KEY_FILE

pytestmark = pytest.mark.live
EXAMPLE = ROOT / "examples" / "runners" / "claude" / "runner.sh"

# $1 is the verb; each snippet runs before the example runner answers it.
ARCHIVE = """if [ "$1" = remove-job ]; then
  mkdir -p {place}/"$2" && cp -a "$BOUNDARY_STATE/." {place}/"$2"/
fi"""  # all of STATE: the account's key goes with it
PACKED = """if [ "$1" = remove-job ]; then
  mkdir -p {place} && tar czf {place}/"$2".tar.gz -C "$BOUNDARY_STATE" checkouts
fi"""
KEY_IN_ETC = """if [ "$1" = setup ] && [ -n "${{BOUNDARY_RUNNER_SECRET:-}}" ]; then
  mkdir -p {place} && printf 'API_KEY=%s\\n' "$BOUNDARY_RUNNER_SECRET" > {place}/env && chmod 0644 {place}/env
fi"""


def sabotaged(directory: Path, snippet: str, place: str) -> str:
    """The example runner with `snippet` (writing at `place`) before each verb: a runner command."""
    runner = directory / "runner.sh"
    runner.write_text(f'#!/bin/bash\n{snippet.format(place=place)}\nexec bash {EXAMPLE} "$@"\n')
    return f"bash {runner}"


def cells(report: dict[str, Any], name: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["target"], r["channel"]): r for r in report["scenarios"][f"claude/{name}"]["results"]}


def written(report: dict[str, Any], name: str) -> list[dict[str, str]]:
    return list(report["scenarios"][f"claude/{name}"]["verb_writes"])


@pytest.mark.parametrize(
    ("snippet", "top", "channel"),
    [(ARCHIVE, "/var/log", "shell_cat"), (PACKED, "/var/tmp", "shell_unpack")],
    ids=["archive", "packed"],
)
def test_a_removed_jobs_data_kept_outside_state_is_found_and_read_by_the_next_job(
    pytester: pytest.Pytester, snippet: str, top: str, channel: str
) -> None:
    place = f"{top}/ci-audit-{secrets.token_hex(4)}"
    runner = sabotaged(pytester.path, snippet, place)
    result, report = run_suite(pytester, "--runner-cmd", runner, "--scenario", "after_removal")
    assert result.ret != 0, result.stdout.str()[-3000:]
    found = cells(report, "after_removal")
    leaked = {target for (target, via), r in found.items() if via == channel and r["verdict"] == "LEAKED"}
    assert {"saved_output", "checkout_file"} <= leaked, found
    assert all(place in found[(target, channel)]["detail"] for target in leaked)
    if snippet == ARCHIVE:  # the key archived with the job's data: job C's shell prints it
        assert found[("runner_secret", "anywhere")]["verdict"] == "LEAKED", found[("runner_secret", "anywhere")]
        assert place in found[("runner_secret", "anywhere")]["detail"]
    assert all(w["verb"] == "remove-job" and w["path"].startswith(place) for w in written(report, "after_removal"))
    result.stdout.fnmatch_lines([f"remove-job wrote outside STATE: {place}/*"])
    assert not Path(place).exists()  # the verb wrote the namespace host's own root, gone with it


def test_the_account_key_kept_again_under_etc_is_found_where_the_next_job_reads_it(pytester: pytest.Pytester) -> None:
    place = f"/etc/agent-runner-{secrets.token_hex(4)}"
    runner = sabotaged(pytester.path, KEY_IN_ETC, place)
    result, report = run_suite(pytester, "--runner-cmd", runner, "--scenario", "cross_job")
    assert result.ret != 0, result.stdout.str()[-3000:]
    secret = cells(report, "cross_job")[("runner_secret", "anywhere")]
    assert secret["verdict"] == "LEAKED", secret
    assert f"{place}/env" in secret["detail"]
    assert [w["path"] for w in written(report, "cross_job") if w["verb"] == "setup"] == [f"{place}/env"]
    assert not Path(place).exists()


def test_the_reference_layout_writes_nothing_outside_state(pytester: pytest.Pytester) -> None:
    """The control: the example itself writes nothing outside STATE, so nothing is listed and after_removal holds."""
    result, report = run_suite(pytester, "--runner-cmd", f"bash {EXAMPLE}", "--scenario", "after_removal")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert written(report, "after_removal") == []
    assert {r["verdict"] for r in cells(report, "after_removal").values()} == {"DENIED"}


def test_runner_check_names_a_write_outside_state_and_leaves_none(tmp_path: Path) -> None:
    place = f"/etc/agent-runner-{secrets.token_hex(4)}"
    argv = [sys.executable, "-m", "boundary.cli", "runner", "check", sabotaged(tmp_path, KEY_IN_ETC, place)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr  # a warning: writing there is not wrong in itself
    assert f"warn setup wrote outside STATE: {place}/env" in done.stdout
    assert not Path(place).exists()


# -- a Python runner: its verbs run on the disposable host too (boundary.runners.hosted) -------------------------


def test_a_python_runners_copy_of_a_removed_jobs_data_outside_state_is_found_and_read(
    pytester: pytest.Pytester,
) -> None:
    runner = "boundary.sabotage.whole_host:CopiesJobsForAudit"
    result, report = run_suite(pytester, "--runner", runner, "--scenario", "after_removal")
    assert result.ret != 0, result.stdout.str()[-3000:]
    found = {(r["target"], r["channel"]): r for r in report["scenarios"]["opencode/after_removal"]["results"]}
    leaked = [r for r in found.values() if r["verdict"] == "LEAKED"]
    assert leaked, found
    assert all(str(AUDIT_LOG) in r["detail"] for r in leaked)
    writes = report["scenarios"]["opencode/after_removal"]["verb_writes"]
    assert writes and all(w["verb"] == "remove-job" and w["path"].startswith(str(AUDIT_LOG)) for w in writes)
    assert not AUDIT_LOG.exists()  # its verbs wrote the namespace host's own root, gone with it


def test_a_python_runners_second_copy_of_the_key_under_etc_is_found(pytester: pytest.Pytester) -> None:
    runner = "boundary.sabotage.whole_host:KeyUnderEtc"
    result, report = run_suite(pytester, "--runner", runner, "--scenario", "cross_job")
    assert result.ret != 0, result.stdout.str()[-3000:]
    results = report["scenarios"]["opencode/cross_job"]["results"]
    secret = next(r for r in results if r["target"] == "runner_secret")
    assert secret["verdict"] == "LEAKED" and str(KEY_FILE) in secret["detail"], secret
    writes = report["scenarios"]["opencode/cross_job"]["verb_writes"]
    assert [w["path"] for w in writes if w["verb"] == "setup"] == [str(KEY_FILE)]
    assert not KEY_FILE.parent.exists()
