"""On-disk layout, the reference runner's parts, and loading a runner by name."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary.layout import RunnerLayout, clone, create_repository, project_id
from boundary.runners.contract import Runner
from boundary.runners.opencode import OpencodeRunner
from boundary.sandboxes import Passthrough, ShellPolicy, Srt, get_sandbox
from boundary.suite.runner_choice import load_runner, load_runners
from boundary.toolchain import tools


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


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """Job paths hold srt's Unix sockets (107 bytes at most): pytest's tmp_path is too long for them."""
    directory = Path(tempfile.mkdtemp(prefix="bt-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_reference_runner_writes_a_careful_job(short_dir: Path) -> None:
    """Per-job data dir, absolute account DB, deny-by-default permissions, a guard, a sandboxed shell, and
    every file that configures the job outside anything the job's tools may write."""
    tools.OPENCODE_CONFIG.install()
    runner = OpencodeRunner()
    runner.setup(short_dir / "state", create_repository(short_dir / "repo.git", {"a": "a"}), "secret")
    job = runner.create_job("job-a", "http://127.0.0.1:4010/jobs/x/v1")
    private = short_dir / "state" / "runner" / "job-a"
    config = json.loads((private / "config" / "opencode" / "opencode.json").read_text())
    assert job.env["XDG_DATA_HOME"] == str(job.data_dir) and job.env["XDG_CONFIG_HOME"] == str(private / "config")
    assert Path(job.env["OPENCODE_DB"]).is_absolute() and job.env["OPENCODE_DISABLE_PROJECT_CONFIG"] == "1"
    assert config["permission"]["external_directory"]["*"] == "deny"
    assert config["tools"] == {"opencode_*": False, "webfetch": False}
    guard = config["plugin"][0][1]
    assert guard["roots"] == [str(job.checkout), str(job.data_dir)] and guard["writeRoots"] == [str(job.checkout)]
    assert str(job.checkout / ".opencode") in guard["protected"] and str(job.checkout / ".git") in guard["protected"]
    settings = json.loads((private / "srt-settings.json").read_text())
    assert settings["filesystem"]["denyRead"] == [str(short_dir / "state")]
    assert str(job.checkout / "opencode.json") in settings["filesystem"]["denyWrite"]
    assert settings["network"]["allowedDomains"] == []
    assert job.argv[0] == str(private / "launch") and job.env["SHELL"] == str(private / "shell")
    runner.remove_job(job)
    assert not job.checkout.exists() and not private.exists()


def test_a_tmpdir_too_long_for_srt_sockets_is_refused_with_the_reason(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60)
    runner = OpencodeRunner()
    runner.setup(deep / "state", create_repository(tmp_path / "repo.git", {"a": "a"}), "secret")
    with pytest.raises(RuntimeError, match="over the 107 a Unix socket path may have"):
        runner.create_job("job-a", "http://127.0.0.1:4010/jobs/x/v1")


def test_the_launcher_hides_the_checkouts_agent_config_from_the_agent(short_dir: Path) -> None:
    """opencode's plugin loader ignores OPENCODE_DISABLE_PROJECT_CONFIG: the launcher hides what the repository
    carries for agents (a tmpfs over directories, /dev/null over files) and makes the runner's files read-only."""
    tools.OPENCODE_CONFIG.install()
    files = {".opencode/plugin/x.js": "evil", "opencode.json": "{}", "src/a.py": "a\n"}
    runner = OpencodeRunner()
    runner.setup(short_dir / "state", create_repository(short_dir / "repo.git", files), "secret")
    job = runner.create_job("job-a", "http://127.0.0.1:4010/jobs/x/v1")
    shell = f"ls -A .opencode; cat opencode.json; cat src/a.py; echo x >> {job.env['SHELL']} || echo read-only"
    seen = subprocess.run([job.argv[0], "bash", "-c", shell], cwd=job.checkout, capture_output=True, text=True)
    assert seen.stdout.split() == ["a", "read-only"], seen
    assert (job.checkout / ".opencode" / "plugin" / "x.js").read_text() == "evil"  # the checkout itself untouched


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
    with pytest.raises(ValueError, match="srt, passthrough, claude"):
        get_sandbox("firejail")


def test_load_runner_accepts_the_reference_and_sabotage_runners() -> None:
    """It returns a factory: each scenario sets up a fresh runner of its own."""
    make = load_runner("boundary.runners.opencode:OpencodeRunner", "srt", None)
    assert isinstance(make(), Runner) and make() is not make()
    assert load_runner("boundary.sabotage.runners:NoPlugin", "passthrough", None)().sandbox.name == "passthrough"


def test_the_default_runner_has_a_reference_runner_for_each_agent() -> None:
    runners = [make() for make in load_runners("boundary.runners:runner", None, "opencode,claude")]
    assert [(r.agent.name, r.sandbox.name) for r in runners] == [("opencode", "srt"), ("claude", "claude")]


def test_an_agent_the_runner_does_not_run_is_a_usage_error() -> None:
    with pytest.raises(pytest.UsageError, match="runs opencode jobs, not claude"):
        load_runner("boundary.sabotage.runners:NoPlugin", None, "claude")
    with pytest.raises(pytest.UsageError, match="unknown agent gemini"):
        load_runners("boundary.runners:runner", None, "opencode,gemini")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "expects MODULE:ATTR"),
        ("boundary.runners:Nope", "cannot build"),
        ("boundary.layout:JobPaths", "cannot build"),
    ],
)
def test_load_runner_explains_a_bad_spec(spec: str, message: str) -> None:
    with pytest.raises(pytest.UsageError, match=message):
        load_runner(spec, "srt", None)


def test_lockfiles_pin_exactly_what_package_json_asks() -> None:
    for project in (tools.TOOLS, tools.OPENCODE_CONFIG):
        pins = json.loads((project.source / "package.json").read_text())["dependencies"]
        lock = json.loads((project.source / "package-lock.json").read_text())["packages"]
        for package, version in pins.items():
            assert lock[f"node_modules/{package}"]["version"] == version


def test_a_job_whose_home_is_outside_the_state_is_refused_and_removed() -> None:
    """Issue 28, item 6: the sabotaged runner gives every job `/home/boundary-runner`; the session refuses the job
    in one line naming where the agent would load its configuration from, and removes what the runner made."""
    from boundary.jobs.session import Session
    from boundary.sabotage.runners import HomeOutsideState

    runner = HomeOutsideState()
    with tempfile.TemporaryDirectory(prefix="bnd-") as short:  # srt's sockets go under TMPDIR: a short path
        session = Session("tamper", None, Path(short))  # type: ignore[arg-type]  # no job starts: no model asked
        session.set_up(runner, {"README.md": "x\n"})
        with pytest.raises(RuntimeError, match=r"create-job job-a: the agent would load its configuration from "):
            session.create_job(runner, "job-a")
        assert not (session.state / "checkouts" / "job-a").exists()
