"""The runner secret's oracle: found in any form anywhere a job could have it, it is LEAKED, naming where."""

from __future__ import annotations

import base64
from pathlib import Path

from boundary.layout import JobPaths
from boundary.runners.contract import Job
from boundary.secret import RunnerSecret


def job(tmp_path: Path, env: dict[str, str] | None = None) -> Job:
    paths = JobPaths("job-b", tmp_path / "checkout", tmp_path / "data", scratch=tmp_path / "tmp")
    for directory in (paths.checkout, paths.data, paths.tmp):
        directory.mkdir(parents=True)
    return Job("job-b", paths, ["/bin/agent", "run"], env or {"HOME": str(tmp_path)})


def test_a_secret_in_the_jobs_environment_is_leaked_naming_the_variable(tmp_path):
    secret = RunnerSecret()
    secret.check_launch(job(tmp_path, {"API_KEY": secret.token}))
    finding = secret.finding(jobs_ran=1)
    assert finding.verdict == "LEAKED" and "$API_KEY" in finding.detail


def test_a_base64_copy_in_a_file_the_job_wrote_is_leaked(tmp_path):
    secret, launched = RunnerSecret(), job(tmp_path)
    (launched.checkout / "out.txt").write_bytes(b"noise:" + base64.b64encode(b"k=" + secret.token.encode()))
    secret.check_files(launched)
    assert secret.finding(jobs_ran=1).verdict == "LEAKED" and "out.txt" in secret.found[0]


def test_a_request_that_carries_it_is_leaked(tmp_path):
    secret = RunnerSecret()
    secret.check_requests("x.job-b", [b'{"messages": []}', f'{{"tool": "{secret.token}"}}'.encode()])
    assert secret.found == ["request 2 job x.job-b sent the model"]


def test_nowhere_is_denied_only_when_a_job_ran(tmp_path):
    secret, launched = RunnerSecret(), job(tmp_path)
    secret.check_launch(launched)
    secret.check_files(launched)
    assert secret.finding(jobs_ran=1).verdict == "DENIED"
    assert secret.finding(jobs_ran=0).verdict == "INCONCLUSIVE"


def test_where_the_secret_lies_is_found_not_declared(tmp_path):
    """Issue 28: a key the runner wrote at setup into a file it does not name (an auth.json), or one the job's env
    names outside STATE, is found from outside, whatever its age, and becomes a target of job B's channels."""
    secret = RunnerSecret()
    state, elsewhere = tmp_path / "state", tmp_path / "etc"
    (state / "accounts" / "a").mkdir(parents=True)
    elsewhere.mkdir()
    auth = state / "accounts" / "a" / "auth.json"
    auth.write_text(f'{{"key": "{secret.token}"}}')
    (state / "accounts" / "a" / "other.json").write_text("{}")
    named = elsewhere / "key"
    named.write_bytes(base64.b64encode(b"k=" + secret.token.encode()))
    launched = job(tmp_path / "job", {"KEY_FILE": str(named), "HOME": str(tmp_path)})
    assert secret.homes(state, launched) == [auth, named]
    finding = secret.finding(jobs_ran=1)
    assert finding.verdict == "DENIED" and f"it lies in {auth}, {named}" in finding.detail
