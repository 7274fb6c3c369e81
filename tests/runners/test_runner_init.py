"""`boundary runner init`: a runner repository to start from, for each agent, that passes as written.

Unit: what it writes (the example byte for byte, the Justfile and workflow adapted), what it refuses. Live: each
written runner answers every verb; the Claude Code one passes the live suite from its own directory.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from live import run_suite
from paths import ROOT

from boundary.cli import main
from boundary.runners import init as runner_init
from boundary.runners.check import check_runner


@pytest.mark.parametrize(("agent", "lang"), list(runner_init.TEMPLATES))
def test_it_writes_the_example_its_recipes_and_its_workflow(tmp_path: Path, agent: str, lang: str) -> None:
    assert main(["runner", "init", "--agent", agent, str(tmp_path)]) == 0
    template = runner_init.TEMPLATES[agent, lang]
    for name in template.files:
        assert (tmp_path / name).read_bytes() == (ROOT / "examples" / "runners" / template.folder / name).read_bytes()
    assert f'runner := "{template.command}"' in (tmp_path / "Justfile").read_text()
    workflow = (tmp_path / runner_init.WORKFLOW).read_text()
    assert f"runner-command: {template.command}" in workflow and f"agent: [{agent}]\n" in workflow
    assert '- "runner.mjs"' in workflow or lang != "mjs"
    assert all(f'- "{name}"' in workflow for name in template.files if not name.endswith(".md"))
    actionlint = shutil.which("actionlint")
    if actionlint:  # `just check` lints the example; the adapted copy must stay valid too
        linted = subprocess.run([actionlint, str(tmp_path / runner_init.WORKFLOW)], capture_output=True, text=True)
        assert linted.returncode == 0, linted.stdout


def test_it_overwrites_nothing_unless_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "Justfile").write_text("mine\n")
    assert main(["runner", "init", "--agent", "claude", str(tmp_path)]) == 2
    assert "already has Justfile: expected none of them there" in capsys.readouterr().err
    assert (tmp_path / "Justfile").read_text() == "mine\n" and not (tmp_path / "runner.sh").exists()
    assert main(["runner", "init", "--agent", "claude", "--force", str(tmp_path)]) == 0
    assert (tmp_path / "Justfile").read_text() != "mine\n"


def test_a_language_boundary_has_no_example_in_is_said_with_what_it_has(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runner", "init", "--agent", "codex", "--lang", "py", "unused"]) == 2
    said = capsys.readouterr().err
    assert "no py runner of codex jobs" in said and "opencode (mjs), claude (sh), codex (sh)" in said


def test_an_example_that_changed_under_it_stops_it_rather_than_half_adapt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    examples = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", examples, symlinks=True)
    justfile = examples / "runner-repository" / "Justfile"
    justfile.write_text(justfile.read_text().replace("runner :=", "runner_command :="))
    monkeypatch.setattr(runner_init, "EXAMPLES", examples)
    with pytest.raises(runner_init.InitError, match=re.escape("expected 'runner := \"node runner.mjs\"' in it")):
        runner_init.init("claude", None, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.live
@pytest.mark.parametrize("agent", runner_init.AGENTS)
def test_each_written_runner_answers_every_verb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str) -> None:
    runner_init.init(agent, None, tmp_path)
    monkeypatch.chdir(tmp_path)  # as `just runner-check` runs it: from the runner's repository
    said: list[str] = []
    check_runner(runner_init.template_for(agent, None).command, None, said.append)
    assert any(line.startswith("ok remove-job") for line in said), "\n".join(said)


@pytest.mark.live
def test_the_written_claude_code_runner_passes_the_live_suite_as_written(pytester: pytest.Pytester) -> None:
    runner_init.init("claude", None, pytester.path)
    result, report = run_suite(pytester, "--runner-cmd", "bash runner.sh")  # from the runner's directory
    assert result.ret == 0, result.stdout.str()[-3000:]
    scenarios = report["scenarios"]
    assert {r["verdict"] for part in scenarios.values() for r in part["results"]} == {"DENIED"}
