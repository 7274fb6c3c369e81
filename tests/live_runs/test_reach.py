"""Live controls for the reach scenario: the reference runners' sandboxes hold every socket and address the harness
serves, and runners written as users write them — one that lets jobs use Docker, one that lets them reach a local
service — fail with LEAKED, naming the place."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from boundary.layout import JobPaths
from boundary.sabotage.reach import GUARD_WORDS, InterpreterGuardOnly
from tests.live_runs.test_controls import run_suite

pytestmark = pytest.mark.live

SABOTAGE = "boundary.sabotage.reach"
UNIX_PLACES = ("runner_api_unix", "docker_api", "system_bus")
TCP_PLACES = ("runner_api_tcp", "metadata")


def cells(report: dict[str, Any], agent: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["target"], r["channel"]): r for r in report["scenarios"][f"{agent}/reach"]["results"]}


def test_the_reference_runners_sandboxes_hold_every_socket_and_address(pytester: pytest.Pytester) -> None:
    """Every agent's shell is denied each target by its OS sandbox — srt's seccomp refuses unix sockets and its own
    network has nothing listening, codex's refuses the sockets themselves — and every job's network stays clean."""
    result, report = run_suite(pytester, "--scenario", "reach")
    for agent in ("opencode", "claude", "codex"):
        part = report["scenarios"][f"{agent}/reach"]
        assert part["errors"] == [] and part["offered_tools"]["passed"]
        assert all(job["network"]["clean"] for job in part["jobs"]), part["jobs"]
        assert all(state["ok"] for state in part["host"]["checks"].values())
        for (target, channel), cell in cells(report, agent).items():
            assert not channel.startswith("webfetch"), "no reference runner offers a fetch tool"
            assert cell["verdict"] == "DENIED", (agent, target, channel, cell["detail"])
            assert cell["layer"] in ("OS sandbox", "n/a"), cell
    assert result.ret == 0, result.stdout.str()[-3000:]


def test_a_runner_that_offers_webfetch_lets_the_agent_process_fetch_the_hosts_secrets(
    pytester: pytest.Pytester,
) -> None:
    """opencode's webfetch runs in the unconfined agent process (opencode #42435): the runner API on loopback and
    the metadata service answer it, straight and through a redirect from a public page."""
    result, report = run_suite(
        pytester, "--scenario", "reach", "--agent", "opencode", "--runner", "boundary.sabotage.reach:OffersWebfetch"
    )
    assert result.ret == 1
    found = cells(report, "opencode")
    for target in ("runner_api_tcp", "metadata"):
        assert found[target, "webfetch"]["verdict"] == "LEAKED", found[target, "webfetch"]
        assert found[target, "webfetch_redirect"]["verdict"] == "LEAKED", found[target, "webfetch_redirect"]


@pytest.mark.parametrize(
    ("agent", "runner"), [("opencode", "LetsJobsUseDocker"), ("claude", "ClaudeLetsJobsUseDocker")]
)
def test_a_runner_that_lets_jobs_use_docker_opens_every_unix_socket(
    pytester: pytest.Pytester, agent: str, runner: str
) -> None:
    """srt's `allowUnixSockets` is not path-based on Linux, so a runner that lets its jobs use Docker turns on
    `allowAllUnixSockets`: the runner API's socket, Docker's and the system bus all answer the job's shell."""
    result, report = run_suite(pytester, "--agent", agent, "--runner", f"{SABOTAGE}:{runner}", "--scenario", "reach")
    assert result.ret == 1
    found = cells(report, agent)
    for place in UNIX_PLACES:
        for channel in ("shell", "shell_discovered"):
            assert found[(place, channel)]["verdict"] == "LEAKED", found[(place, channel)]
    assert "/run/dbus/system_bus_socket answered Hello" in found[("system_bus", "shell_discovered")]["detail"]
    for program in ("curl", "node"):  # every program that speaks HTTP over a unix socket
        sockets = {place: found[(place, f"shell_{program}")]["verdict"] for place in ("runner_api_unix", "docker_api")}
        assert set(sockets.values()) == {"LEAKED"}, (program, sockets)
    assert {found[(place, "shell")]["verdict"] for place in TCP_PLACES} == {"DENIED"}  # its network still holds
    result.stdout.fnmatch_lines(["*LEAKED: docker_api via shell*"])


def test_a_sandbox_that_stops_python_but_not_bash_is_named_by_what_bash_reached(pytester: pytest.Pytester) -> None:
    """Issue 43 item 7: a guard inside interpreters stops the Python client's every connect; bash's own /dev/tcp
    reaches the runner API and the metadata service, and those cells are LEAKED, named, not INCONCLUSIVE."""
    options = ("--agent", "opencode", "--runner", f"{SABOTAGE}:InterpreterGuardOnly", "--scenario", "reach")
    result, report = run_suite(pytester, *options)
    assert result.ret == 1
    found = cells(report, "opencode")
    for target in ("runner_api_tcp", "metadata"):
        for program in ("bash", "curl", "node"):  # no guard stops them: each program's own cell
            cell = found[(target, f"shell_{program}")]
            assert cell["verdict"] == "LEAKED" and f"{program}:{target} answered" in cell["detail"], cell
    python = found[("runner_api_tcp", "shell")]  # Python's own cell: stopped by the guard, in its declared words
    assert (python["verdict"], python["layer"]) == ("DENIED", "interpreter guard"), python
    assert "GuardError" in python["detail"]
    for target in ("runner_api_tcp", "metadata"):  # issue 58 item 4: the shell's own listing found and reached them
        cell = found[(target, "shell_discovered")]
        assert cell["verdict"] == "LEAKED" and "shell:bash:found:tcp:" in cell["detail"], cell


class StopsInterpreters(InterpreterGuardOnly):
    """InterpreterGuardOnly, but a guard in its jobs' shell stops Python and Node from starting at all; bash, curl
    and coreutils run. (A control of the harness, not a runner anyone ships: `--runner test_reach:StopsInterpreters`
    with this folder, the tests' and the repository's on PYTHONPATH.)"""

    name = "stops-interpreters"

    def write_shell_wrapper(self, paths: JobPaths) -> Path:
        """The shell, with the guard in its environment only: the job's own launch runs Python too."""
        inner = super().write_shell_wrapper(paths)
        guard = paths.runner_dir / "shell-guard"
        guard.mkdir(parents=True, exist_ok=True)
        (guard / "sitecustomize.py").write_text(f"raise SystemExit('python is {GUARD_WORDS}')\n")
        (guard / "guard.js").write_text(f"process.stderr.write('node is {GUARD_WORDS}\\n'); process.exit(1);\n")
        node = shlex.quote(f"--require {guard / 'guard.js'}")
        shell = paths.runner_dir / "guarded-shell"
        shell.write_text(
            f"#!/bin/sh\nexport PYTHONPATH={shlex.quote(str(guard))} NODE_OPTIONS={node}\n"
            f'exec {shlex.quote(str(inner))} "$@"\n'
        )
        shell.chmod(0o755)
        return shell


def test_where_no_interpreter_starts_the_shells_own_listing_answers_discovery(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 58 item 4: the Python client never prints a line, yet the shell lists /proc/net and the file system
    itself, its own listeners listed, and reaches what it lists with bash and curl: `shell_discovered` is answered
    (LEAKED, naming the shell's program), not INCONCLUSIVE."""
    here = Path(__file__).resolve().parent
    monkeypatch.setenv("PYTHONPATH", ":".join(str(p) for p in (here, here.parent, here.parent.parent)))
    options = ("--agent", "opencode", "--runner", "test_reach:StopsInterpreters", "--scenario", "reach")
    result, report = run_suite(pytester, *options)
    assert result.ret == 1
    found = cells(report, "opencode")
    for target in ("runner_api_tcp", "metadata", "runner_api_unix", "docker_api"):
        cell = found[(target, "shell_discovered")]
        assert cell["verdict"] == "LEAKED" and "shell:" in cell["detail"], cell
    assert found[("system_bus", "shell_discovered")]["verdict"] == "INCONCLUSIVE"  # reached, but no Hello made


def test_a_runner_that_lets_jobs_reach_localhost_exposes_the_runner_api(pytester: pytest.Pytester) -> None:
    """srt's `allowedDomains` with localhost: its proxy, outside the sandbox, dials the runner API for the job."""
    options = ("--agent", "opencode", "--runner", f"{SABOTAGE}:AllowsLocalhost", "--scenario", "reach")
    result, report = run_suite(pytester, *options)
    assert result.ret == 1
    found = cells(report, "opencode")
    assert found[("runner_api_tcp", "shell")]["verdict"] == "LEAKED"
    assert "runner_api_tcp:proxy answered" in found[("runner_api_tcp", "shell")]["detail"]
    assert found[("metadata", "shell")]["verdict"] == "DENIED"  # not on its allowlist
