"""A runner's own repository, as a new user sets it up: boundary installed as a tool from this checkout,
the example JavaScript runner and the template's recipe. The recipe passes; the defective copy fails LEAKED."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from paths import ROOT

EXAMPLES = ROOT / "examples"
TIMEOUT_S = 1200

pytestmark = pytest.mark.live


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def runner_repository(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A git repository holding only the runner and the recipe, and an environment with boundary on PATH."""
    base = tmp_path_factory.mktemp("runner-repo")
    repo = base / "repo"
    repo.mkdir()
    for name in ("runner.mjs", "guard.js"):
        shutil.copy(EXAMPLES / "runners" / "opencode" / name, repo / name)
    defective = (EXAMPLES / "runners" / "opencode-shared-data" / "runner.mjs").read_text()
    (repo / "defective").mkdir()
    (repo / "defective" / "runner.mjs").write_text(defective.replace("../opencode/runner.mjs", "../runner.mjs"))
    shutil.copy(EXAMPLES / "runner-repository" / "Justfile", repo / "Justfile")
    env = {**os.environ, "UV_TOOL_DIR": str(base / "uv-tools"), "UV_TOOL_BIN_DIR": str(base / "bin")}
    env["PATH"] = os.pathsep.join([str(base / "bin"), str(Path(sys.executable).parent), env["PATH"]])
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "our runner"]):
        done = run([*argv[:1], "-c", "user.name=t", "-c", "user.email=t@localhost", *argv[1:]], repo, env)
        assert done.returncode == 0, done.stderr
    uv = Path(sys.executable).parent / "uv"
    installed = run([str(uv), "tool", "install", "--python", sys.executable, str(ROOT)], repo, env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (base / "bin" / "boundary").exists()
    return repo, env


def test_the_recipe_passes_against_the_example_runner(runner_repository):
    repo, env = runner_repository
    checked = run(["just", "runner-check"], repo, env)
    assert checked.returncode == 0 and "PASS" in checked.stdout, checked.stdout + checked.stderr
    done = run(["just", "runner-sandbox", "--agent", "opencode"], repo, env)
    report = json.loads((repo / "reports" / "runner-sandbox.json").read_text())
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert set(report["scenarios"]) >= {f"opencode/{name}" for name in ("cross_job", "tamper", "sweep")}


def test_the_recipe_fails_leaked_against_the_defective_copy(runner_repository):
    repo, env = runner_repository
    runner = "runner=node defective/runner.mjs"
    done = run(["just", runner, "runner-sandbox", "--agent", "opencode", "--scenario", "cross_job"], repo, env)
    report = json.loads((repo / "reports" / "runner-sandbox.json").read_text())
    verdicts = {r["verdict"] for r in report["scenarios"]["opencode/cross_job"]["results"]}
    assert done.returncode != 0 and "LEAKED" in verdicts, done.stdout[-4000:]
