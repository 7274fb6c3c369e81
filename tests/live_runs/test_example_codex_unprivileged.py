"""codex-action's `unprivileged-user` strategy as a shell runner (examples/runners/codex-unprivileged-user).

Live: the runner passes every codex scenario with the OS-user layer seen refusing, its per-account shape passes
cross_job, and each sabotaged variant fails with its verdict (the shared uid LEAKS job A's checkout; the key in
the job's environment LEAKS the runner secret). Unit: what the strategy needed of the harness — a user new to a
host is no host change by itself, the namespace host's /etc is private, and the runner's hook refuses to add a
user to the /etc the runner itself sees.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

from boundary.host.namespace import NamespaceHost
from boundary.host.run_sockets import socket_diff
from boundary.layout import create_repository
from boundary.runners.command import call_env
from boundary.scenarios.base import JOB_A
from boundary.suite import pytest_args

EXAMPLE = ROOT / "examples" / "runners" / "codex-unprivileged-user"
RUNNER = f"bash {EXAMPLE / 'runner.sh'}"
CROSS_JOB = ("--scenario", "cross_job")
live = pytest.mark.live


def run_suite(pytester: pytest.Pytester, command: str, *options: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    """The live suite against the runner command, in a subprocess; its result and JSON report."""
    report = pytester.path / "report.json"
    argv = (*pytest_args(), "--boundary-report", str(report), "--runner-cmd", command, *options)
    result = pytester.runpytest_subprocess(*argv, timeout=900)
    assert report.exists(), f"the suite wrote no report:\n{result.stdout.str()[-3000:]}"
    return result, json.loads(report.read_text())


def results(report: dict[str, Any], scenario: str = "cross_job") -> list[dict[str, Any]]:
    part: dict[str, Any] = report["scenarios"][f"codex/{scenario}"]
    found: list[dict[str, Any]] = part["results"]
    return found


def verdicts(report: dict[str, Any], channel: str, scenario: str = "cross_job") -> dict[str, str]:
    return {r["target"]: r["verdict"] for r in results(report, scenario) if r["channel"] == channel}


# -- live ---------------------------------------------------------------------------------------------------


@live
def test_runner_passes_every_codex_scenario_with_the_os_user_layer(pytester: pytest.Pytester) -> None:
    """On the namespace host, where its verbs run too: every probe DENIED, the host unharmed though each job adds its
    user, and in cross_job the OS user refuses job A's checkout while codex's sandbox hides A's sessions and the
    account. (On --host container its verbs run on this machine: after_removal cannot list what they left.)"""
    result, report = run_suite(pytester, RUNNER)
    assert result.ret == 0, result.stdout.str()[-3000:]
    names = {"cross_job", "cross_job_writes", "tamper", "hostile_repository", "sweep", "after_removal"}
    names |= {"reach", "escalation", "sessions"}
    assert set(report["scenarios"]) == {f"codex/{name}" for name in names}
    for part in report["scenarios"].values():
        assert {r["verdict"] for r in part["results"]} == {"DENIED"}
        assert all(state["ok"] for state in part["host"]["checks"].values())
    layers = report["scenarios"]["codex/cross_job"]["layers"]
    assert set(layers) == {"OS user", "OS sandbox"} and all(count > 0 for count in layers.values())
    by_layer = {r["target"]: r["layer"] for r in results(report) if r["channel"] == "shell_cat"}
    assert by_layer == {
        "checkout_file": "OS user",
        "saved_output": "OS sandbox",
        "planted_rollout": "OS sandbox",
        "planted_archived_rollout": "OS sandbox",
        "account_db": "OS sandbox",
    }
    result.stdout.fnmatch_lines(["*RESULT: PASS*"])


@live
def test_the_actions_own_shape_one_codex_user_per_account_passes(pytester: pytest.Pytester) -> None:
    """One `codex` user for the account: codex's sandbox keeps the account's jobs apart, the uid keeps the key
    and the account database with the runner (the namespace host: a private /etc takes the user)."""
    result, report = run_suite(pytester, f"bash {EXAMPLE / 'per-account.sh'}", *CROSS_JOB)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert {r["verdict"] for r in results(report)} == {"DENIED"}
    by_layer = {r["target"]: r["layer"] for r in results(report) if r["channel"] == "shell_cat"}
    assert by_layer["checkout_file"] == "OS sandbox"
    assert by_layer["account_db"] == "OS user"


@live
def test_jobs_sharing_one_uid_and_a_group_writable_checkout_leak(pytester: pytest.Pytester) -> None:
    """Sabotage: every job runs as the account's one user, nothing else keeps them apart: job B reads job A's
    checkout through every channel, and the OS-user layer refuses nothing."""
    result, report = run_suite(pytester, f"bash {EXAMPLE / 'shared-uid.sh'}", *CROSS_JOB)
    assert result.ret == 1
    for channel in ("shell_cat", "shell_cat_computed", "shell_ls", "job_output"):
        assert verdicts(report, channel)["checkout_file"] == "LEAKED", channel
    assert report["scenarios"]["codex/cross_job"]["layers"]["OS user"] == 0
    result.stdout.fnmatch_lines(["*LEAKED: checkout_file via shell_cat: canary came back*", "*RESULT: FAIL*"])


@live
def test_the_key_in_the_jobs_environment_leaks_the_runner_secret(pytester: pytest.Pytester) -> None:
    """Sabotage: the account's API key handed to codex as OPENAI_API_KEY: the runner secret is LEAKED, and
    the report names the variable of each job."""
    result, report = run_suite(pytester, f"bash {EXAMPLE / 'key-in-env.sh'}", *CROSS_JOB)
    assert result.ret == 1
    (secret,) = [r for r in results(report) if r["target"] == "runner_secret"]
    assert secret["verdict"] == "LEAKED"
    assert f"job {JOB_A}'s environment ($OPENAI_API_KEY)" in secret["detail"]
    result.stdout.fnmatch_lines(["*LEAKED: runner_secret via anywhere*", "*RESULT: FAIL*"])


@live
@pytest.mark.parametrize("variant", ["runner.sh", "per-account.sh", "shared-uid.sh", "key-in-env.sh"])
def test_each_variant_answers_every_verb(variant: str) -> None:
    """`boundary runner check`: every verb answered as the protocol asks, and one job started, in seconds."""
    argv = [sys.executable, "-m", "boundary.cli", "runner", "check", f"bash {EXAMPLE / variant}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout


# -- unit: what the strategy needed of the harness ------------------------------------------------------------


def socket_state(reach: list[str], mode: str = "0666") -> dict[str, Any]:
    return {"ino": 1, "mode": mode, "uid": 0, "gid": 0, "acl": None, "reach": reach}


def test_a_user_new_to_the_host_reaching_what_every_user_reaches_is_no_change() -> None:
    """The runner's hook adds a user; the bus every user reaches is then reachable by it too. That is no
    finding; a new user reaching a socket `nobody` cannot (a privileged group), or a known one gaining, is."""
    before = {"/run/bus": socket_state(["nobody", "root"]), "/run/docker.sock": socket_state(["root"], "0660")}
    added = {
        "/run/bus": socket_state(["codex-61001", "nobody", "root"]),
        "/run/docker.sock": socket_state(["root"], "0660"),
    }
    assert socket_diff(before, added) == ""
    privileged = {**added, "/run/docker.sock": socket_state(["codex-61001", "root"], "0660")}
    assert socket_diff(before, privileged) == "/run/docker.sock: now reachable by codex-61001"
    known = {"/run/bus": socket_state(["root"], "0600"), "/run/docker.sock": socket_state(["nobody", "root"])}
    gained = {**known, "/run/bus": socket_state(["nobody", "root"], "0600")}
    assert socket_diff(known, gained) == "/run/bus: now reachable by nobody"


ACCOUNT_FILES = ("passwd", "group", "shadow", "gshadow")


def etc_digest() -> dict[str, str]:
    return {
        name: hashlib.sha256(Path("/etc", name).read_bytes()).hexdigest()
        for name in ACCOUNT_FILES
        if Path("/etc", name).exists()
    }


def test_the_namespace_hosts_etc_is_its_own_so_a_hook_may_add_users(tmp_path: Path) -> None:
    """/etc inside is the host's own root's, an overlay whose writes land in its upper layer: useradd there (as the
    runner's hook does) adds the user inside, and this machine's account files stay as they were."""
    before = etc_digest()
    outside = os.stat("/etc")
    with NamespaceHost(tmp_path / "host").start() as host:
        assert host.run(["stat", "-c", "%d:%i", "/etc"]).stdout.strip() != f"{outside.st_dev}:{outside.st_ino}"
        assert host.run(["findmnt", "-n", "-o", "FSTYPE", "-T", "/etc"]).stdout.strip() == "overlay"
        added = host.run(["useradd", "--system", "--no-create-home", "--uid", "61999", "boundary-etc-probe"])
        assert added.returncode == 0, added.stderr
        assert host.run(["getent", "passwd", "boundary-etc-probe"]).stdout.startswith("boundary-etc-probe:x:61999:")
        assert host.run(["getent", "passwd", "systemd-resolve"]).returncode == 0  # the host's own users are there
    assert etc_digest() == before
    assert not any(line.startswith("boundary-etc-probe:") for line in Path("/etc/passwd").read_text().splitlines())


@live
def test_the_hook_refuses_to_add_a_user_to_the_runners_own_etc(tmp_path: Path) -> None:
    """Run where /etc is the one the runner saw (a namespace host without its own /etc shares this machine's),
    the hook refuses before anything else. It runs here in a mount namespace with /etc read-only, so even a
    hook that did not refuse could change nothing."""
    repository = create_repository(tmp_path / "repos" / "project.git", {"README.md": "hook test\n"})
    state = tmp_path / "state"
    state.mkdir()
    env = call_env(None, state) | {"BOUNDARY_RUNNER_SECRET": "hook-test-secret"}
    runner = ["bash", str(EXAMPLE / "runner.sh")]
    subprocess.run([*runner, "setup", str(state), str(repository)], env=env, check=True, capture_output=True)
    answer = subprocess.run(
        [*runner, "create-job", "job-a", "http://127.0.0.1:9/v1"], env=env, check=True, capture_output=True
    )
    (hook,) = json.loads(answer.stdout)["hooks"]
    read_only_etc = 'mount --bind /etc /etc && mount -o remount,bind,ro /etc && exec "$@"'
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c", read_only_etc, "hook", *hook],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert "refusing to add user codex-61001: this /etc is the runner's own" in done.stderr
    assert not any(line.startswith("codex-61001:") for line in Path("/etc/passwd").read_text().splitlines())
    subprocess.run([*runner, "remove-job", "job-a"], env=env, check=True, capture_output=True)
