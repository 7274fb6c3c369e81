"""Each layer alone (`boundary run --layers each`): how a runner turns a layer off, the runs with one layer left on,
and the depth grid every rendering shows; a switch that turns nothing off is a warning of `runner check`."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from boundary.layout import JobPaths
from boundary.report.beside import depth_grid, depth_lines
from boundary.report.depth import depth_of
from boundary.report.markdown import to_markdown
from boundary.report.terminal import summary_lines
from boundary.runners import runner
from boundary.runners.check import _layer_switches
from boundary.runners.contract import Job
from boundary.runners.protocol import ProtocolError, read_describe
from boundary.suite.runner_choice import load_runners, with_layer_alone
from tests.report.test_render import make_report
from tests.runners.test_runner_protocol import DESCRIBE

LAYERS = {"agent permission": ["rule"], "runner plugin": ["guard:"], "OS sandbox": ["EPERM"]}


def test_a_runner_says_how_each_layer_is_turned_off_and_only_for_layers_it_claims() -> None:
    said = read_describe(json.dumps(DESCRIBE | {"layer_off": {"OS sandbox": {"BOUNDARY_SANDBOX": "passthrough"}}}))
    assert said.layer_off == {"OS sandbox": {"BOUNDARY_SANDBOX": "passthrough"}}
    with pytest.raises(ProtocolError, match="layer 'runner plugin' is not one the runner claims"):
        read_describe(json.dumps(DESCRIBE | {"layer_off": {"runner plugin": {"X": "off"}}}))
    with pytest.raises(ProtocolError, match="expected a non-empty object of environment variables"):
        read_describe(json.dumps(DESCRIBE | {"layer_off": {"OS sandbox": "off"}}))


def test_the_reference_opencode_runner_with_its_plugin_alone_keeps_only_the_plugin(tmp_path: Path) -> None:
    """Agent permission open, the sandbox passthrough, the guard still loaded; codex (no plugin layer) left out."""
    factories = with_layer_alone(load_runners("boundary.runners:runner", None, "opencode,codex"), "runner plugin")
    assert [make().agent.name for make in factories] == ["opencode"]
    alone = cast(Any, factories[0]())
    paths = JobPaths("a", tmp_path / "a", tmp_path / "a.data")
    assert alone.sandbox.name == "passthrough" and alone.off == {"agent permission", "OS sandbox"}
    assert alone.permission(paths)["external_directory"] == "allow" and alone.plugins(paths)
    full = cast(Any, runner(agent="opencode"))
    assert full.sandbox.name == "srt" and full.permission(paths)["external_directory"]["*"] == "deny"


def test_a_layer_that_cannot_be_turned_off_stops_the_run_saying_which() -> None:
    stuck = SimpleNamespace(name="mine", agent=SimpleNamespace(name="opencode"), denials=LAYERS)
    stuck.cannot_turn_off = lambda: {"OS sandbox": "its `describe` gives no `layer_off` for it"}
    stuck.turn_off = lambda layers: None
    with pytest.raises(pytest.UsageError, match=r"runner mine \(opencode\) cannot turn off OS sandbox: its `describe`"):
        with_layer_alone([lambda: cast(Any, stuck)], "agent permission")


def _alone(report: dict[str, Any], layer: str, leaked: set[str]) -> dict[str, Any]:
    """`report` as a run with `layer` alone: the channels in `leaked` leak, the rest are denied by that layer."""
    alone = copy.deepcopy(report)
    for result in alone["scenarios"]["cross_job"]["results"]:
        result |= {"verdict": "LEAKED", "layer": "none"} if result["channel"] in leaked else {"layer": layer}
    return alone


def test_the_depth_grid_shows_each_cell_with_each_layer_alone_and_names_a_layer_that_holds_nothing() -> None:
    full = make_report()
    full["run"]["denials"] = {"opencode": LAYERS}
    shells = {"shell_cat", "shell_cat_computed", "shell_ls"}
    alone = {
        "agent permission": _alone(
            full, "agent permission", {r["channel"] for r in full["scenarios"]["cross_job"]["results"]}
        ),
        "runner plugin": _alone(full, "runner plugin", shells),
        "OS sandbox": "its run wrote no report (exit 4): see its output above",
    }
    full["depth"] = depth_of(full, alone)
    assert depth_lines(full) == [
        "agent permission alone: holds 0 of 38 cells — it holds nothing alone",
        "runner plugin alone: holds 24 of 38 cells",
        "OS sandbox alone: not run — its run wrote no report (exit 4): see its output above",
    ]
    header, rows = depth_grid(full, "cross_job")
    assert header == ["cell", "full run", "perm alone", "plugin alone"]
    assert ["saved_output via read", "plugin", "LEAKED", "plugin"] in rows
    assert ["saved_output via shell_cat", "perm", "LEAKED", "LEAKED"] in rows
    assert "holds nothing alone" in "\n".join(summary_lines(full)) and "*Each layer alone:*" in to_markdown(full)


def test_runner_check_warns_of_a_switch_that_turns_nothing_off(tmp_path: Path) -> None:
    """A runner that names a `layer_off` its create-job ignores: the job is the same with the layer off."""
    made: list[str] = []

    def create_job(name: str, _url: str) -> Job:
        made.append(name)
        data = tmp_path / f"{name}.data"
        data.mkdir(exist_ok=True)
        (data / "opencode.json").write_text(json.dumps({"plugin": ["guard.js"], "job": name}))
        return Job(name, JobPaths(name, tmp_path / name, data), ["launch", name], {"HOME": str(data)})

    fake = SimpleNamespace(description=SimpleNamespace(layer_off={"runner plugin": {"RUNNER_GUARD": "off"}}))
    fake.cannot_turn_off = lambda: {"OS sandbox": "no layer_off"}
    fake.turn_off, fake.create_job, fake.remove_job = (lambda layers: None), create_job, (lambda job: None)
    said: list[str] = []
    warnings = _layer_switches(cast(Any, fake), create_job("check-a", ""), said.append)
    assert warnings == [
        "layer runner plugin: its layer_off changes nothing create-job starts or writes: is it honoured?"
    ]
    assert said[0] == "   no layer_off for: OS sandbox (`--layers each` cannot run the other layers alone)"
    assert made == ["check-a", "check-runner-plugin-off"]


@pytest.mark.live
def test_layers_each_on_the_opencode_reference_the_plugin_alone_holds_reads_and_the_os_alone_the_shell(
    tmp_path: Path,
) -> None:
    """The live run: the full run, then each of opencode's three layers alone; the report's grid says which held."""
    argv = [
        sys.executable,
        "-m",
        "boundary.cli",
        "run",
        "--agent",
        "opencode",
        "--scenario",
        "cross_job",
        "--layers",
        "each",
    ]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=1800, env=os.environ.copy())
    report = json.loads((tmp_path / "reports" / "runner-sandbox.json").read_text())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    depth = report["depth"]
    assert depth["layers"] == ["agent permission", "runner plugin", "OS sandbox"] and not depth["not_run"]
    plugin, os_alone = (
        depth["alone"]["runner plugin"]["opencode/cross_job"],
        depth["alone"]["OS sandbox"]["opencode/cross_job"],
    )
    assert plugin["checkout_file via read_symlink"] == "runner plugin"  # the guard holds the file tools alone
    assert os_alone["saved_output via shell_cat_computed"] == "OS sandbox"  # srt holds the shell alone
    assert plugin["saved_output via shell_cat_computed"] == "LEAKED"  # and the plugin cannot hold the shell
    assert "each layer alone" in done.stdout
