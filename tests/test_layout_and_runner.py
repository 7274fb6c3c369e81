"""On-disk layout, the reference runner's parts, and loading a runner by name."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from boundary import tools
from boundary.layout import RunnerLayout, clone, create_repository, project_id
from boundary.plugin import load_runner
from boundary.runner import ReferenceRunner, Runner
from boundary.sandboxes import Passthrough, ShellPolicy, Srt, get_sandbox


def test_repository_is_real_git_and_checkouts_share_a_project(tmp_path: Path) -> None:
    repository = create_repository(tmp_path / "repo.git", {"a.txt": "hello\n"})
    clone(repository, tmp_path / "one")
    clone(repository, tmp_path / "two")
    assert (tmp_path / "one" / "a.txt").read_text() == "hello\n"
    assert project_id(tmp_path / "one") == project_id(tmp_path / "two")


def test_job_data_dir_sits_beside_its_checkout_and_goes_with_it(tmp_path: Path) -> None:
    paths = RunnerLayout(tmp_path).job("job-a")
    assert paths.data == tmp_path / "checkouts" / "job-a.data"
    paths.checkout.mkdir(parents=True)
    paths.create_dirs()
    paths.remove()
    assert not paths.checkout.exists() and not paths.data.exists()


def test_reference_runner_writes_a_careful_job(tmp_path: Path) -> None:
    """Per-job data dir, absolute account DB, deny-by-default permissions, guard plugin, sandboxed shell."""
    tools.OPENCODE_CONFIG.install()
    runner = ReferenceRunner()
    runner.setup(tmp_path / "state", create_repository(tmp_path / "repo.git", {"a": "a"}))
    job = runner.create_job("job-a", "http://127.0.0.1:4010/jobs/x/v1")
    config = json.loads((job.paths.config_home / "opencode" / "opencode.json").read_text())
    assert job.env["XDG_DATA_HOME"] == str(job.data_dir)
    assert Path(job.env["OPENCODE_DB"]).is_absolute()
    assert config["permission"]["external_directory"]["*"] == "deny"
    assert config["tools"] == {"opencode_*": False}
    assert config["plugin"][0][1]["roots"] == [str(job.checkout), str(job.data_dir)]
    settings = json.loads((job.data_dir / "srt-settings.json").read_text())
    assert settings["filesystem"]["denyRead"] == [str(tmp_path / "state")]
    assert settings["network"]["allowedDomains"] == []
    runner.remove_job(job)
    assert not job.checkout.exists()


@pytest.mark.parametrize("sandbox", [Srt(), Passthrough()], ids=["srt", "passthrough"])
def test_shell_wrapper_refuses_anything_but_dash_c(tmp_path: Path, sandbox: Srt | Passthrough) -> None:
    """The agent may only hand the wrapper `-c CMD`; anything else is refused, not run unconfined."""
    tools.TOOLS.install()
    wrapper = tmp_path / "shell"
    wrapper.write_text(sandbox.wrapper(ShellPolicy([], [], [tmp_path]), tmp_path))
    wrapper.chmod(0o755)
    refused = subprocess.run([str(wrapper), "-i"], capture_output=True, text=True)
    assert refused.returncode == 126 and "expected '-c CMD'" in refused.stderr


def test_unknown_sandbox_names_the_choices() -> None:
    with pytest.raises(ValueError, match="srt, passthrough"):
        get_sandbox("firejail")


def test_load_runner_accepts_the_reference_and_sabotage_runners() -> None:
    assert isinstance(load_runner("boundary.runner:ReferenceRunner", "srt"), Runner)
    assert load_runner("boundary.sabotage.runners:NoPlugin", "passthrough").sandbox.name == "passthrough"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "expects MODULE:ATTR"),
        ("boundary.runner:Nope", "cannot build"),
        ("boundary.layout:JobPaths", "cannot build"),
    ],
)
def test_load_runner_explains_a_bad_spec(spec: str, message: str) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        load_runner(spec, "srt")


def test_lockfiles_pin_exactly_what_package_json_asks() -> None:
    for project in (tools.TOOLS, tools.OPENCODE_CONFIG):
        pins = json.loads((project.source / "package.json").read_text())["dependencies"]
        lock = json.loads((project.source / "package-lock.json").read_text())["packages"]
        for package, version in pins.items():
            assert lock[f"node_modules/{package}"]["version"] == version
