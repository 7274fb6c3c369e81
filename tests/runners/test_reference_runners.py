"""What Claude Code's and codex's reference runners write for a job, read from the files themselves.

As tests/runners/test_layout_and_runner.py does for opencode's: a change that loosens a defence fails here first.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from boundary.layout import create_repository
from boundary.runners.claude import ClaudeRunner
from boundary.runners.codex import CodexRunner
from boundary.toolchain import tools

MODEL = "http://127.0.0.1:4010/jobs/x/v1"


@pytest.fixture
def short_dir() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="bt-"))  # a job's TMPDIR holds Unix sockets: 107 bytes at most
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(autouse=True)
def pinned_tools() -> None:
    tools.TOOLS.install()


def test_claude_settings_come_from_the_runner_alone_with_its_sandbox_on_and_hooks_off(short_dir):
    runner = ClaudeRunner()
    runner.setup(short_dir / "state", create_repository(short_dir / "repo.git", {"a": "a"}), "secret")
    job = runner.create_job("job-a", MODEL)
    settings_file = short_dir / "state" / "runner" / "job-a" / "settings.json"
    settings = json.loads(settings_file.read_text())
    assert settings["sandbox"]["enabled"] and settings["sandbox"]["failIfUnavailable"]
    assert settings["sandbox"]["allowUnsandboxedCommands"] is False
    assert settings["disableAllHooks"] and settings["enableAllProjectMcpServers"] is False
    assert settings["sandbox"]["filesystem"]["denyRead"] == [str(short_dir / "state")]
    argv = job.argv
    assert argv[argv.index("--setting-sources") + 1] == "" and argv[argv.index("--settings") + 1] == str(settings_file)
    assert "--strict-mcp-config" in argv and "--dangerously-skip-permissions" not in argv
    assert job.env["ANTHROPIC_BASE_URL"] == MODEL.removesuffix("/v1") and "secret" not in json.dumps(job.env)


def test_claudes_deny_rules_cover_the_runners_state_and_every_other_checkout(short_dir):
    runner = ClaudeRunner()
    runner.setup(short_dir / "state", create_repository(short_dir / "repo.git", {"a": "a"}), "secret")
    job = runner.create_job("job-a", MODEL)
    deny = runner.settings(job.paths)["permissions"]["deny"]
    state = short_dir / "state"
    for place in (state / "accounts", state / "runner", state / "checkouts" / "*.data", job.checkout / ".claude"):
        assert f"Read(/{place})" in deny and f"Edit(/{place}/**)" in deny, place
    assert f"Read(/{state / 'checkouts' / 'job-a-b'})" not in deny  # spelled as patterns, never as names
    assert any(rule.startswith(f"Read(/{state / 'checkouts' / 'job-a'}?*") for rule in deny)  # job-a-b, job-ab…
    assert not any(rule == f"Read(/{job.checkout})" for rule in deny)  # its own checkout stays readable


def test_codex_runs_with_a_profile_that_closes_the_state_but_the_jobs_own_places(short_dir):
    runner = CodexRunner()
    runner.setup(short_dir / "state", create_repository(short_dir / "repo.git", {"a": "a"}), "secret")
    job = runner.create_job("job-a", MODEL)
    profile = runner.permissions(job.paths)
    assert profile is not None
    assert profile[":root"] == "read" and profile[str(short_dir / "state")] == "none"
    assert profile[str(job.checkout)] == "write" and profile[str(job.paths.tmp)] == "write"
    assert profile[str(job.checkout / "AGENTS.md")] == "read" and profile[str(job.checkout / ".git")] == "read"
    argv = " ".join(job.argv)
    assert "--ignore-user-config" in argv and "--ignore-rules" in argv
    assert "--trust" not in argv and "--dangerously-bypass-approvals-and-sandbox" not in argv
    assert 'features={"plugins" = false' in argv and 'web_search="disabled"' in argv
    assert (job.checkout / "AGENTS.override.md").is_dir()  # held: no job can put a file there


def test_codex_with_its_sandbox_off_says_so_in_its_flags(short_dir):
    runner = CodexRunner(sandbox="passthrough")
    runner.setup(short_dir / "state", create_repository(short_dir / "repo.git", {"a": "a"}), "secret")
    job = runner.create_job("job-a", MODEL)
    assert runner.permissions(job.paths) is None and "--dangerously-bypass-approvals-and-sandbox" in job.argv


def test_every_reference_runner_keeps_the_secret_out_of_the_job(short_dir):
    for make in (ClaudeRunner, CodexRunner):
        state = short_dir / make.__name__
        runner = make()
        runner.setup(state, create_repository(short_dir / f"{make.__name__}.git", {"a": "a"}), "s3cret-token")
        job = runner.create_job("job-a", MODEL)
        [credentials] = runner.credentials()
        assert credentials.read_text().strip() == "s3cret-token" and credentials.stat().st_mode & 0o077 == 0
        assert "s3cret-token" not in json.dumps([job.argv, job.env])
