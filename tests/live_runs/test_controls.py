"""Live controls: the scenarios run against sabotaged runners must FAIL, and the reference runner must pass.

Each control runs the real suite (real opencode, real srt, real git) in a
subprocess pytest and reads its JSON report. A check no sabotage can trip is
a defect, so every check of the live suite is tripped by at least one control.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live import no_host_search, run_suite

from boundary.agents.opencode import ASK_REJECTED
from boundary.host.health import CHECKS
from boundary.host.run_sockets import run_sockets
from boundary.host.services import services
from boundary.suite import pytest_args
from boundary.suite.prepare import KEPT_MARKER, WORKDIR_PREFIX
from boundary.toolchain import node, tools

SABOTAGE = "boundary.sabotage.runners"
TOOLS = "boundary.sabotage.tools"  # runners that offer a tool that reads or fetches what it must not
HOST = "boundary.sabotage.host"  # runners whose launch step damages the host

pytestmark = pytest.mark.live


def scenario(report: dict[str, Any], name: str = "cross_job") -> dict[str, Any]:
    """The scenario's part of a one-agent run (the report keys each as agent/scenario)."""
    (agent,) = report["run"]["agents"]
    part: dict[str, Any] = report["scenarios"][f"{agent}/{name}"]
    return part


def verdicts(report: dict[str, Any], channel: str, name: str = "cross_job") -> dict[str, str]:
    return {r["target"]: r["verdict"] for r in scenario(report, name)["results"] if r["channel"] == channel}


CROSS_JOB = ("--agent", "opencode", "--scenario", "cross_job")  # one agent: the default runs all three


def test_yesterdays_runner_is_tampered_leaks_and_executes(pytester: pytest.Pytester) -> None:
    """Incident 6: the runner's files sat in the job's own data directory, in reach of its write tool. Job B
    rewrites them (TAMPERED), its next shell reads job A's output (LEAKED), and a plugin it planted runs
    unconfined at the restart (EXECUTED)."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:ConfigInReach", "--scenario", "tamper")
    assert result.ret == 1
    assert verdicts(report, "write", "tamper")["runner_files"] == "TAMPERED"
    assert verdicts(report, "edit", "tamper")["project_config"] == "TAMPERED"
    assert verdicts(report, "reprobe", "tamper")["job_a_saved_output"] == "LEAKED"
    assert verdicts(report, "resumed", "tamper")["planted_code"] == "EXECUTED"
    result.stdout.fnmatch_lines(["*TAMPERED: runner_files via write*", "*RESULT: FAIL*"])


def test_each_beacon_fires_when_project_config_loads(pytester: pytest.Pytester) -> None:
    """Incident 7, and each beacon's control: a runner that loads what the repository carries runs every
    planted piece of code unconfined (a beacon that cannot fire would prove nothing), and the repository's
    permission rules replace the runner's."""
    options = ("--runner", f"{SABOTAGE}:LoadsProjectConfig", "--scenario", "hostile_repository")
    result, report = run_suite(pytester, *options)
    assert result.ret == 1
    loaded = verdicts(report, "loaded", "hostile_repository")
    assert loaded == dict.fromkeys(
        ("plugin_dir", "plugins_dir", "config_plugin", "custom_tool", "mcp_server"), "EXECUTED"
    )
    assert verdicts(report, "shell_cat", "hostile_repository")["project_permissions"] == "TAMPERED"


def test_a_guard_open_over_the_state_lets_b_write_into_a(pytester: pytest.Pytester) -> None:
    """The job's file tools may write anywhere under the runner's state: job A's files change (WRITTEN)."""
    options = ("--runner", f"{SABOTAGE}:WritesOtherJobs", "--scenario", "cross_job_writes")
    result, report = run_suite(pytester, *options)
    assert result.ret == 1
    written = verdicts(report, "write", "cross_job_writes")
    assert written.pop("shared_file") == "DENIED"  # its jobs share no file by inode: nothing there to write
    assert set(written.values()) == {"WRITTEN"}


def test_an_unconfined_shell_finds_everything_a_running_job_left(pytester: pytest.Pytester) -> None:
    """The sweep: with nothing confining the shell, job B finds each of job A's canaries where A put it —
    /tmp, /dev/shm, its checkout, its $HOME — and A's environment through /proc (one PID namespace). For
    opencode and codex; Claude Code without its sandbox refuses to run the sweep at all (its controls fail)."""
    result, report = run_suite(pytester, "--agent", "opencode,codex", "--sandbox", "passthrough", "--scenario", "sweep")
    assert result.ret == 1
    for agent in ("opencode", "codex"):
        results = report["scenarios"][f"{agent}/sweep"]["results"]
        assert {r["verdict"] for r in results if r["channel"] == "proc_sweep"} == {"LEAKED"}
        shell = {r["target"]: r["verdict"] for r in results if r["channel"] == "shell_sweep"}
        wrote = {
            "checkout_untracked",
            "tmpdir",
            "home",
            "tmp",
            "var_tmp",
            "dev_shm",
            "checkout_committed",
            "write_tool",
        }
        wrote |= set() if agent == "codex" else {"data_home"}  # codex's environment names no XDG_DATA_HOME
        assert {target: shell[target] for target in wrote} == dict.fromkeys(wrote, "LEAKED"), agent
        # One network namespace (the pod's) and no seccomp: B connects to the socket A holds. The runner's
        # launcher still gives each agent its own IPC namespace: A's System V and POSIX queues stay its own.
        assert shell["ipc/abstract_socket"] == "LEAKED", agent
        assert {shell[f"ipc/{kind}"] for kind in ("sysv_shm", "sysv_msg", "posix_mqueue")} == {"DENIED"}, agent
    with no_host_search():
        assert not list(Path("/tmp").glob("boundary-sweep-*")), "the sweep left A's canaries in /tmp"


SHARED_TMP = ("tmpdir", "tmp_claude")


def test_srt_as_it_comes_shares_tmp_claude_between_jobs(pytester: pytest.Pytester) -> None:
    """srt gives every sandboxed shell TMPDIR=/tmp/claude and lets it write there once that exists. The harness
    makes it before the jobs run (a PASS never rests on a fresh host): what job A leaves in the $TMPDIR its shell
    sees, job B finds, and the place is named."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:KeepsSrtTmpdir", "--scenario", "sweep")
    assert result.ret == 1
    shell = verdicts(report, "shell_sweep", "sweep")
    assert {place: shell.pop(place) for place in SHARED_TMP} == dict.fromkeys(SHARED_TMP, "LEAKED")
    assert set(shell.values()) == {"DENIED"}
    result.stdout.fnmatch_lines(["*LEAKED: tmpdir via shell_sweep: *canary found: /tmp/claude/*"])


def test_passthrough_sandbox_leaks_the_computed_path(pytester: pytest.Pytester) -> None:
    """Incident 4: a shell wrapper that confines nothing; only the OS sandbox could stop a computed path."""
    result, report = run_suite(pytester, "--sandbox", "passthrough", *CROSS_JOB)
    assert result.ret == 1
    assert set(verdicts(report, "shell_cat_computed").values()) == {"LEAKED"}
    result.stdout.fnmatch_lines(["*LEAKED: *via shell_cat_computed*", "*RESULT: FAIL*"])


def test_missing_plugin_leaks_through_a_symlink(pytester: pytest.Pytester) -> None:
    """Without the guard, opencode's read tool follows a symlink in the job's own checkout. (Compared with a base
    report that is not there: said, and nothing compared; the runner's claimed layers are in the report.)"""
    against = ("--against", str(pytester.path / "no-base.json"))
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:NoPlugin", *against, *CROSS_JOB)
    assert result.ret == 1
    assert verdicts(report, "read_symlink")["checkout_file"] == "LEAKED"
    assert scenario(report)["layers"]["runner plugin"] == 0
    assert report["comparison"]["base"]["missing"] == "no base report there"
    assert list(report["run"]["denials"]["opencode"]) == ["agent permission", "runner plugin", "OS sandbox"]
    result.stdout.fnmatch_lines(["*against *no-base.json: no base report there — nothing compared"])


def test_a_guard_that_compares_paths_as_strings_lets_the_prefix_named_job_in(pytester: pytest.Pytester) -> None:
    """Job B is `job-b`, job A `job-b.data-a`: B's roots are string prefixes of A's, so a guard comparing with a bare
    `startsWith(root)` lets a symlink in B's checkout resolve into A's checkout and A's data directory."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:PrefixGuard", *CROSS_JOB)
    assert result.ret == 1
    leaked = verdicts(report, "read_symlink")
    assert {leaked[target] for target in ("checkout_file", "saved_output")} == {"LEAKED"}, leaked
    result.stdout.fnmatch_lines(["*LEAKED: checkout_file via read_symlink: canary came back*"])


def test_a_secret_in_a_file_the_runner_does_not_name_is_found_and_leaked(pytester: pytest.Pytester) -> None:
    """The runner names no file for its key; the harness finds the file from outside and job B's unguarded read
    tool reaches it through a symlink: the runner_secret cell is LEAKED, and says where the key lies."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:UnnamedSecret", *CROSS_JOB)
    assert result.ret == 1
    (secret,) = [r for r in scenario(report)["results"] if r["target"] == "runner_secret"]
    assert secret["verdict"] == "LEAKED", secret


def test_shared_data_dir_leaks_saved_output(pytester: pytest.Pytester) -> None:
    """Incident 1: jobs of one account share a data directory, so B reads A's saved output."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:SharedDataDir", *CROSS_JOB)
    assert result.ret == 1
    assert verdicts(report, "read")["saved_output"] == "LEAKED"


def test_allow_all_permissions_is_a_lost_layer(pytester: pytest.Pytester) -> None:
    """Other layers still hold, but the agent-permission layer denied nothing: the run fails."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:AllowAllDirectories", *CROSS_JOB)
    assert result.ret == 1
    assert scenario(report)["layers"]["agent permission"] == 0
    result.stdout.fnmatch_lines(["*RESULT: FAIL*layer agent permission denied nothing in any opencode scenario*"])


def test_opencode_mcp_tools_fail_the_offered_tools_check(pytester: pytest.Pytester) -> None:
    """Incident 2: an MCP server named opencode offers opencode_session_move and the runner removes nothing."""
    result, report = run_suite(pytester, "--runner", f"{TOOLS}:OpencodeMcp", "-k", "offered", *CROSS_JOB)
    assert result.ret == 1
    assert "opencode_session_move" in scenario(report)["offered_tools"]["forbidden"]
    result.stdout.fnmatch_lines(["*offered tools: FAILED*opencode_session_move*"])


def test_a_declared_file_reading_tool_is_attacked_from_its_schema(pytester: pytest.Pytester) -> None:
    """Issue 28: a runner's MCP tool that reads any file, declared in its expected tools, is driven with job A's
    paths in its one string parameter: LEAKED, named; the agent's own extra tools (skill, task, todowrite) hold."""
    result, report = run_suite(pytester, "--runner", f"{TOOLS}:DeclaredFileTool", *CROSS_JOB)
    assert result.ret == 1
    tools = {r["target"]: r for r in scenario(report)["results"] if r["channel"] == "any_parameter"}
    assert tools["tool:files_read_text"]["verdict"] == "LEAKED", tools["tool:files_read_text"]
    assert "tool-probe-files_read_text-file-path got back" in tools["tool:files_read_text"]["detail"]
    assert {tools[f"tool:{name}"]["verdict"] for name in ("skill", "task", "todowrite")} == {"DENIED"}
    assert scenario(report)["offered_tools"]["passed"]  # declared: only the attack can tell


def test_a_tool_keyed_by_job_is_asked_for_job_as_files_in_job_a(pytester: pytest.Pytester) -> None:
    """Issue 43 item 1: a log viewer that reads a file only in the job named beside it is asked for A's file in
    job A (the other string names the job of the call's file): LEAKED, named; the agent's own tools, now tried
    with each of their choices, flags and numbers, hold."""
    result, report = run_suite(pytester, "--runner", f"{TOOLS}:JobKeyedFileTool", *CROSS_JOB)
    assert result.ret == 1
    tools = {r["target"]: r for r in scenario(report)["results"] if r["channel"] == "any_parameter"}
    assert tools["tool:files_job_file"]["verdict"] == "LEAKED", tools["tool:files_job_file"]
    # Through the path slot (the job slot's probes name job A with no file of its): whichever form met a file of
    # A's checkout or data first (each form names another of A's files, the account's database not one of them).
    assert "tool-probe-files_job_file-path-" in tools["tool:files_job_file"]["detail"]
    assert {tools[f"tool:{name}"]["verdict"] for name in ("skill", "task", "todowrite")} == {"DENIED"}


def test_a_file_tool_deferred_behind_tool_search_is_loaded_checked_and_attacked(pytester: pytest.Pytester) -> None:
    """Issue 43 item 2: Claude Code sends a deferred MCP tool's name only, behind ToolSearch; the runner declares
    what the model is sent whole. The harness loads the deferred tools through ToolSearch as a model does: the
    offered-tools check names the reader, and the undeclared tools' cell says it leaks."""
    runner = "boundary.sabotage.claude:DeferredFileTool"
    result, report = run_suite(pytester, "--runner", runner, *CLAUDE_CROSS_JOB)
    assert result.ret == 1
    assert scenario(report)["offered_tools"]["added"] == ["mcp__files__read_text"]
    cell = next(r for r in scenario(report)["results"] if r["target"] == "undeclared_tools")
    assert cell["verdict"] == "LEAKED" and "mcp__files__read_text" in cell["detail"], cell


def test_a_file_tool_held_back_by_codex_tool_search_is_searched_for_and_attacked(pytester: pytest.Pytester) -> None:
    """Issue 43 item 2, codex: its tool_search holds an MCP server's tools back without naming them. The harness
    searches once with the words tools are described by, as a model would: the reader is offered, and leaks."""
    result, report = run_suite(pytester, "--runner", "boundary.sabotage.codex:DeferredFileTool", *CODEX_CROSS_JOB)
    assert result.ret == 1
    assert "mcp__files.read_text" in scenario(report)["offered_tools"]["forbidden"]
    cell = next(r for r in scenario(report)["results"] if r["target"] == "undeclared_tools")
    assert cell["verdict"] == "LEAKED" and "tool mcp__files.read_text:" in cell["detail"], cell


def test_an_undeclared_file_reading_tool_is_attacked_too(pytester: pytest.Pytester) -> None:
    """The same tool, not declared: the offered-tools check fails, and the undeclared tools' cell says it leaks."""
    result, report = run_suite(pytester, "--runner", f"{TOOLS}:UndeclaredFileTool", *CROSS_JOB)
    assert result.ret == 1
    cell = next(r for r in scenario(report)["results"] if r["target"] == "undeclared_tools")
    assert cell["verdict"] == "LEAKED" and "files_read_text" in cell["detail"], cell
    assert scenario(report)["offered_tools"]["added"] == ["files_read_text"]


@pytest.mark.parametrize(
    ("runner", "named"),
    [
        ("DeclaredFetchTool", "tool web_get, url"),
        ("CheckedFetchTool", "tool web_get, url (through a 302"),
        ("DownloadTool", "answered the request of tool web_download, url"),
    ],
)
def test_a_declared_fetching_tool_is_given_the_reach_places_urls(
    pytester: pytest.Pytester, runner: str, named: str
) -> None:
    """Issue 28: a runner's MCP tool that fetches any URL, declared: reach's `any_tool` channel gives its string
    parameter the runner API's and the metadata service's URLs, and both canaries come back, named. The same tool
    refusing internal addresses it is given (CheckedFetchTool) reaches both through the public place's 302. A tool
    that saves the page to a file and answers only its size (DownloadTool, issue 43) is named by the places' log."""
    options = ("--agent", "opencode", "--scenario", "reach")
    result, report = run_suite(pytester, "--runner", f"{TOOLS}:{runner}", *options)
    assert result.ret == 1
    cells = {r["target"]: r for r in scenario(report, "reach")["results"] if r["channel"] == "any_tool"}
    assert {name: cell["verdict"] for name, cell in cells.items()} == {"runner_api_tcp": "LEAKED", "metadata": "LEAKED"}
    assert all(named in cell["detail"] for cell in cells.values()), cells


def test_a_task_tool_that_continues_any_session_is_caught_and_named(pytester: pytest.Pytester) -> None:
    """Issue 28: the task tool, handed job A's session id as `task_id`, continues A's session inside job B (the
    reference guard refuses a task this job did not start): the tool's cell names it, the context cell finds A's
    canaries in what that session sent the model."""
    result, report = run_suite(pytester, "--runner", f"{TOOLS}:ContinuesAnyTask", *CROSS_JOB)
    assert result.ret == 1
    cells = {r["target"]: r for r in scenario(report)["results"] if r["channel"] in ("any_parameter", "context")}
    assert cells["tool:task"]["verdict"] == "LEAKED", cells["tool:task"]
    assert "task_id continued job A's session" in cells["tool:task"]["detail"]
    assert cells["job_a_canaries"]["verdict"] == "LEAKED"


@pytest.mark.parametrize(
    ("runner", "watch"),
    [("PhonesHome", "trace"), ("PhonesHomeSeenByPackets", "packets"), ("SendsADatagram", "trace")],
)
def test_phoning_home_fails_the_network_check(pytester: pytest.Pytester, runner: str, watch: str) -> None:
    """A runner that lets opencode fetch its model catalog: the job tries DNS beyond loopback, seen either way; one
    whose launcher writes a datagram to a connected UDP socket (no address in the call) is seen by the trace."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:{runner}", "-k", "reach_only_the_model", *CROSS_JOB)
    assert result.ret == 1
    jobs = scenario(report)["jobs"]
    assert not all(job["network"]["clean"] for job in jobs)
    assert {job["network"]["observed_by"] for job in jobs} == {watch}
    result.stdout.fnmatch_lines(["*FAILED*test_jobs_reach_only_the_model*"])


def test_bad_runner_spec_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*pytest_args(), "--runner", "no.such.module:Runner")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--runner no.such.module:Runner: cannot build a runner*"])


def test_host_that_cannot_sandbox_fails_once_in_seconds(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Incident 5: bwrap cannot create its namespaces; the run stops before any test, says why once, records it."""
    fake_command(
        pytester,
        monkeypatch,
        "bwrap",
        "echo 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted' >&2; exit 1",
    )
    result, report = run_suite(pytester, "-n", "2", *CROSS_JOB)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = result.stdout.str() + result.stderr.str()
    assert said.count("cannot run here: bwrap namespaces") == 1 and "fix:" in said
    assert " passed" not in said and "created: 2/2 workers" not in said  # stopped before any worker or test
    assert report["run"]["errors"][0].startswith("cannot run here: bwrap namespaces")


def test_a_node_too_old_for_srt_on_path_stops_the_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--tools path` with a Node 20 first on PATH (Debian's, nodesource's): srt 0.0.83 declares >=22.12.0."""
    monkeypatch.setenv("PATH", f"{tools.TOOLS.bin('srt').parent}:{os.environ['PATH']}")
    fake_command(pytester, monkeypatch, "node", "echo v20.20.2")
    result, report = run_suite(pytester, "--tools", "path", *CROSS_JOB)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "@anthropic-ai/sandbox-runtime 0.0.83 needs >=22.12.0" in report["run"]["errors"][0]


def test_tools_from_path_run_the_suite_and_the_report_says_so(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flake.lock loop's mode, tried with the npm-installed tools and the pinned Node put on PATH."""
    path = [tools.TOOLS.bin("srt").parent, node.wheel_bin_dir(), os.environ["PATH"]]
    monkeypatch.setenv("PATH", ":".join(map(str, path)))
    result, report = run_suite(pytester, "--tools", "path", *CROSS_JOB)
    assert result.ret == 0, result.stdout.str()[-3000:]
    versions = report["run"]["versions"]
    assert versions["tools"] == "from PATH" and versions["opencode"].startswith("1.18.33")


def fake_command(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> None:
    """A shell script `name` first on PATH."""
    fake = pytester.path / "fakebin"
    fake.mkdir(exist_ok=True)
    (fake / name).write_text(f"#!/bin/sh\n{body}\n")
    (fake / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")


def test_timed_out_jobs_are_inconclusive_not_denied(pytester: pytest.Pytester) -> None:
    """A job killed at its timeout proves nothing, and the run fails saying why. Killed before it asked the model
    anything, the unit's first job shows the runner's jobs do not start in that time: the unit did not run, no cell
    is judged (issue 44), and no probe is DENIED."""
    result, report = run_suite(pytester, "--job-timeout", "1", "-k", "test_probe", *CROSS_JOB)
    assert result.ret == 1
    part = scenario(report)
    assert part["results"] == [] and "timed out after 1 s before it asked the model" in part["not_started"]["what"]
    job = part["jobs"][0]
    assert job["exit_code"] is None and "timed out" in job["problems"][0]
    assert any(reason.endswith("did not run") for reason in report["verdict"]["failures"])


def host_checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(scenario(report)["host"]["checks"])


DISPOSABLE_HOSTS = pytest.mark.parametrize("host", ["namespace", "container"])


def run_host_control(pytester: pytest.Pytester, runner: str, host: str) -> dict[str, dict[str, Any]]:
    """The host-health scenario against a host-damaging runner: the run must fail; its host checks."""
    result, report = run_suite(pytester, "--runner", f"{HOST}:{runner}", "--host", host, "-k", "host", *CROSS_JOB)
    assert result.ret == 1, result.stdout.str()[-3000:]
    return host_checks(report)


SYSCTLS = (
    "kernel/unprivileged_userns_clone",
    "user/max_user_namespaces",
    "kernel/yama/ptrace_scope",
    "net/ipv4/ip_forward",
)


def real_host_state() -> dict[str, Any]:
    """What no test may change on this machine: /run sockets, services, users, sysctls (the harness's own probes)."""
    sockets = run_sockets()
    # The Docker engine the container host needs makes a shim socket per container, in its own directory.
    sockets = {path: state for path, state in sockets.items() if not path.startswith("/run/containerd/s/")}
    sysctls = {name: Path("/proc/sys", name).read_text() for name in SYSCTLS if Path("/proc/sys", name).exists()}
    users = {name: Path("/etc", name).read_text() for name in ("passwd", "group")}
    return {"sockets": sockets, "services": services(), "users": users, "sysctls": sysctls}


@pytest.fixture(autouse=True)
def real_host_unchanged() -> Iterator[None]:
    """Every control, whatever it sabotages, leaves this machine as it found it (checked with the same probes)."""
    before = real_host_state()
    yield
    assert real_host_state() == before, "a control changed the real machine"


def test_reference_runner_passes_on_the_container_host(pytester: pytest.Pytester) -> None:
    """The same suite, with systemd as PID 1: services are checked too, and nothing fails."""
    result, report = run_suite(pytester, "--host", "container", *CROSS_JOB)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert set(host_checks(report)) == set(CHECKS) and scenario(report)["host"]["not_checked"] == {}
    assert all(state["ok"] for state in host_checks(report).values())


@DISPOSABLE_HOSTS
def test_drop_sudo_is_caught_in_the_order_it_unfolds(pytester: pytest.Pytester, host: str) -> None:
    """Incident 3: the socket chmod, the bus refusing others, then DNS dead once resolved restarts.

    The namespace host's resolved dies when the harness restarts it; the container's is killed by its
    watchdog, because systemd's notify socket was chmod'ed too — nobody restarts anything there.
    """
    checks = run_host_control(pytester, "DropSudo", host)
    assert re.search(r"/run/dbus/system_bus_socket: mode 0(666|777)→0(600|700)", checks["run_sockets"]["detail"])
    assert "Permission denied" in checks["system_bus_nobody"]["detail"]
    assert checks["system_bus_root"]["ok"]  # root passes a 0700 socket: why the non-root probe exists
    assert not checks["dns"]["ok"] and not checks["resolver"]["ok"]
    assert checks["system_bus_nobody"]["after_s"] < checks["dns"]["after_s"]
    if host == "namespace":
        assert checks["dns"]["first_failed"] == "after restarting systemd-resolved"
    else:
        assert "systemd-resolved.service" in checks["services"]["detail"]
        assert "/run/systemd/notify: mode 0777→0700" in checks["run_sockets"]["detail"]
        assert checks["dns"]["first_failed"].startswith(("watchdog during", "after cross_job"))


@DISPOSABLE_HOSTS
def test_killed_resolver_is_caught(pytester: pytest.Pytester, host: str) -> None:
    """Killed on the namespace host, resolved stays dead; under systemd it restarts, and the restart is the finding."""
    checks = run_host_control(pytester, "KillsResolver", host)
    assert checks["system_bus_root"]["ok"]
    if host == "namespace":
        assert not checks["resolver"]["ok"] and not checks["dns"]["ok"]
    else:
        assert "systemd-resolved.service: restarted" in checks["services"]["detail"]


@DISPOSABLE_HOSTS
def test_killed_bus_is_caught(pytester: pytest.Pytester, host: str) -> None:
    """The one control that takes the bus from root too; under systemd the bus comes back by socket activation,
    and the new invocation of dbus.service is the finding."""
    checks = run_host_control(pytester, "KillsBus", host)
    if host == "namespace":
        assert not checks["system_bus_root"]["ok"] and not checks["system_bus_nobody"]["ok"]
    else:
        assert "dbus.service: restarted" in checks["services"]["detail"]


@DISPOSABLE_HOSTS
def test_process_left_behind_is_named(pytester: pytest.Pytester, host: str) -> None:
    checks = run_host_control(pytester, "LeavesProcess", host)
    assert "sleep" in checks["processes"]["detail"]


@DISPOSABLE_HOSTS
def test_port_left_listening_is_named(pytester: pytest.Pytester, host: str) -> None:
    checks = run_host_control(pytester, "OpensPort", host)
    assert "new listener: tcp 127.0.0.1:7777 (socat)" in checks["listeners"]["detail"]


@DISPOSABLE_HOSTS
def test_acl_deny_with_the_mode_unchanged_is_named(pytester: pytest.Pytester, host: str) -> None:
    """`setfacl -m u:nobody:---` on the bus: mode bits still say 0666/0777; the ACL and the reach say otherwise."""
    checks = run_host_control(pytester, "DeniesNobodyByAcl", host)
    detail = checks["run_sockets"]["detail"]
    assert "/run/dbus/system_bus_socket: acl none→" in detail and "no longer reachable by nobody" in detail
    assert "mode" not in detail
    assert "Permission denied" in checks["system_bus_nobody"]["detail"]


def test_live_host_without_a_bus_fails_with_the_alternative(pytester: pytest.Pytester) -> None:
    """This machine has no system bus: --host live says so in one line, names the host that works, leaves nothing."""
    result, report = run_suite(pytester, "--host", "live", *CROSS_JOB)
    assert result.ret == 1 and "passed" not in result.parseoutcomes()
    assert "use --host namespace" in scenario(report)["errors"][0]
    runs = Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*")
    gone = [run for run in runs if not Path("/proc", run.name.removeprefix(WORKDIR_PREFIX).split("-")[0]).exists()]
    orphans = [run for run in gone if not (run / KEPT_MARKER).exists()]  # kept on purpose: --boundary-keep
    assert orphans == [], "a run whose host did not boot left its work directory behind"


# --- Claude Code: its own sandbox confines Bash only; the file tools need permission rules ----------------------

CLAUDE_CROSS_JOB = ("--agent", "claude", "--scenario", "cross_job")


def test_claude_reference_runner_passes(pytester: pytest.Pytester) -> None:
    """Claude Code's reference runner: permission rules stop the file tools, its sandbox stops the shell."""
    result, report = run_suite(pytester, *CLAUDE_CROSS_JOB)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert report["run"]["agents"] == {"claude": "claude"}
    assert {r["verdict"] for r in scenario(report)["results"]} == {"DENIED"}
    assert all(count > 0 for count in scenario(report)["layers"].values())


def test_claude_sandbox_alone_leaves_the_read_tool_open(pytester: pytest.Pytester) -> None:
    """Only `sandbox.filesystem` rules and permissions skipped: Bash is held by the sandbox, Read is not."""
    result, report = run_suite(pytester, "--runner", "boundary.sabotage.claude:SandboxOnly", *CLAUDE_CROSS_JOB)
    assert result.ret == 1
    assert set(verdicts(report, "read").values()) >= {"LEAKED"}
    assert verdicts(report, "read")["saved_output"] == "LEAKED"
    assert set(verdicts(report, "shell_cat_computed").values()) == {"DENIED"}
    assert scenario(report)["layers"]["agent permission"] == 0


def test_claude_without_its_sandbox_loses_the_os_layer(pytester: pytest.Pytester) -> None:
    """Claude Code's sandbox off: its permission prompts refuse in print mode, but no OS layer holds anything."""
    result, report = run_suite(pytester, "--sandbox", "passthrough", *CLAUDE_CROSS_JOB)
    assert result.ret == 1
    assert scenario(report)["layers"]["OS sandbox"] == 0
    result.stdout.fnmatch_lines(["*RESULT: FAIL*layer OS sandbox denied nothing in any*"])


def test_claude_keeping_its_sandboxs_write_defaults_shares_tmp_claude(pytester: pytest.Pytester) -> None:
    """Claude Code's sandbox is srt's: /tmp/claude, which the harness makes, is writable from every job's shell."""
    runner = ("--runner", "boundary.sabotage.claude:KeepsSandboxDefaults")
    result, report = run_suite(pytester, "--agent", "claude", *runner, "--scenario", "sweep")
    assert result.ret == 1
    shell = verdicts(report, "shell_sweep", "sweep")
    assert shell.pop("tmp_claude") == "LEAKED"
    assert set(shell.values()) == {"DENIED"}  # its shell's TMPDIR is Claude Code's own, under the job's


def test_claude_with_nothing_on_leaks_through_the_shell(pytester: pytest.Pytester) -> None:
    """Permissions skipped and the sandbox off: a computed path in the shell reads job A's files."""
    result, report = run_suite(pytester, "--runner", "boundary.sabotage.claude:NothingHolds", *CLAUDE_CROSS_JOB)
    assert result.ret == 1
    assert set(verdicts(report, "shell_cat_computed").values()) == {"LEAKED"}


# --- codex: its bwrap sandbox with a permission profile holds the shell; without a profile it reads everywhere ---

CODEX_CROSS_JOB = ("--agent", "codex", "--scenario", "cross_job")


def test_codex_reference_runner_passes(pytester: pytest.Pytester) -> None:
    """codex's reference runner: the permission profile leaves the runner's state unreachable to the shell."""
    result, report = run_suite(pytester, *CODEX_CROSS_JOB)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert report["run"]["agents"] == {"codex": "codex"}
    assert {r["verdict"] for r in scenario(report)["results"]} == {"DENIED"}
    assert scenario(report)["offered_tools"]["offered"] == ["apply_patch", "exec_command", "write_stdin"]
    assert all(count > 0 for count in scenario(report)["layers"].values())


def test_codex_read_only_without_a_profile_leaks(pytester: pytest.Pytester) -> None:
    """`-s read-only` alone confines writes, not reads: `cat` of job A's transcript returns its canary."""
    result, report = run_suite(pytester, "--runner", "boundary.sabotage.codex:ReadOnlyNoProfile", *CODEX_CROSS_JOB)
    assert result.ret == 1
    assert set(verdicts(report, "shell_cat").values()) == {"LEAKED"}
    assert verdicts(report, "shell_cat")["saved_output"] == "LEAKED"


def test_codex_view_image_reads_job_a_files_without_returning_them(pytester: pytest.Pytester) -> None:
    """Issue 28: codex's default `view_image`, no profile: A's file is answered as B's own ("unable to process
    image"), a missing one otherwise; no canary comes back, and the missing-file control still names the leak."""
    result, report = run_suite(pytester, "--runner", "boundary.sabotage.codex:ViewsAnyImage", *CODEX_CROSS_JOB)
    assert result.ret == 1
    cell = next(r for r in scenario(report)["results"] if r["target"] == "tool:view_image")
    assert cell["verdict"] == "LEAKED" and "was answered as B's own file" in cell["detail"], cell


def test_codex_without_its_sandbox_leaks_through_the_shell(pytester: pytest.Pytester) -> None:
    """codex's sandbox bypassed: no layer holds, a computed path reads every target, and the OS layer is missed."""
    result, report = run_suite(pytester, "--sandbox", "passthrough", *CODEX_CROSS_JOB)
    assert result.ret == 1
    assert set(verdicts(report, "shell_cat_computed").values()) == {"LEAKED"}
    assert scenario(report)["layers"]["OS sandbox"] == 0
    result.stdout.fnmatch_lines(["*RESULT: FAIL*layer OS sandbox denied nothing in any*"])


# --- every agent's hostile repository can fire: a runner that loads the project's configuration runs it all ----


def test_claude_loading_project_settings_executes_the_repositorys_hooks_and_mcp_server(
    pytester: pytest.Pytester,
) -> None:
    """CVE-2025-59536's shape: project settings and MCP servers on, nothing hidden: each beacon runs unconfined."""
    options = ("--runner", "boundary.sabotage.claude:LoadsProjectSettings", "--scenario", "hostile_repository")
    result, report = run_suite(pytester, "--agent", "claude", *options)
    assert result.ret == 1
    assert set(verdicts(report, "loaded", "hostile_repository").values()) == {"EXECUTED"}


def test_codex_trusting_the_project_executes_its_mcp_server_and_hooks(pytester: pytest.Pytester) -> None:
    """`--trust` (and hook trust): the repository's MCP server and SessionStart hook run unconfined."""
    options = ("--runner", "boundary.sabotage.codex:TrustsTheProject", "--scenario", "hostile_repository")
    result, report = run_suite(pytester, "--agent", "codex", *options)
    assert result.ret == 1
    assert set(verdicts(report, "loaded", "hostile_repository").values()) == {"EXECUTED"}


# --- Claude Code in a terminal: an operator who says yes to every prompt removes the "not granted yet" refusals --


CLAUDE_TERMINAL = ("--agent", "claude", "--scenario", "terminal")


def test_claude_reference_runner_holds_in_a_terminal(pytester: pytest.Pytester) -> None:
    """Deny rules are never asked: every prompt approved, the file tools still miss job A, the sandbox the shell."""
    result, report = run_suite(pytester, *CLAUDE_TERMINAL)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert {r["verdict"] for r in scenario(report, "terminal")["results"]} == {"DENIED"}
    assert set(verdicts(report, "shell_cat_computed", "terminal").values()) == {"DENIED"}


def test_claude_relying_on_print_mode_leaks_once_an_operator_approves(pytester: pytest.Pytester) -> None:
    """Without a deny rule for other checkouts, the operator's yes lets every file tool read job A's checkout."""
    result, report = run_suite(pytester, "--runner", "boundary.sabotage.claude:TrustsPrintMode", *CLAUDE_TERMINAL)
    assert result.ret == 1
    leaked = {ch: verdicts(report, ch, "terminal")["checkout_file"] for ch in ("read", "read_relative", "grep", "glob")}
    assert set(leaked.values()) == {"LEAKED"}, leaked
    assert verdicts(report, "shell_cat_computed", "terminal")["checkout_file"] == "DENIED"  # the sandbox still holds
    output = next(r for r in scenario(report, "terminal")["results"] if r["channel"] == "job_output")
    assert "operator approved" in output["detail"]


def test_a_refusal_that_ends_the_job_does_not_end_the_probing(pytester: pytest.Pytester) -> None:
    """opencode as a published runner starts it: a refused `ask` ends `opencode run` with its batch of results
    lost. The calls it left unanswered run again in new jobs, so each cell gets an answer: the shared data
    directory is LEAKED through every channel, not 40 cells of INCONCLUSIVE; a call that ends its job alone on
    opencode's refused ask is DENIED by its permission layer, in the words it printed (issue 43 item 7)."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:OpencodeDefaults", *CROSS_JOB)
    assert result.ret == 1
    assert (
        set(verdicts(report, "read").values()) >= {"LEAKED"}
        and verdicts(report, "shell_cat")["saved_output"] == "LEAKED"
    )
    results = scenario(report)["results"]
    inconclusive = [r for r in results if r["verdict"] == "INCONCLUSIVE"]
    ended = [r for r in results if "the job ended on this call" in r["detail"]]
    assert ended and all(r["verdict"] == "DENIED" and r["layer"] == "agent permission" for r in ended), ended
    assert all(ASK_REJECTED in r["detail"] for r in ended)
    assert sum(r["verdict"] == "LEAKED" for r in results) > len(inconclusive), [r["detail"] for r in inconclusive]
    assert any(job["name"].endswith(".rerun1") for job in scenario(report)["jobs"])


def test_a_runner_at_opencodes_default_permissions_gets_every_cell_named(pytester: pytest.Pytester) -> None:
    """Issue 43: opencode's own rules ask before leaving the checkout, and `opencode run` ends on the refused ask.
    The guard and the sandbox still hold: `tamper` (its account-database run too) and `hostile_repository` (both
    starts) run what each ended job left in new jobs, and pass with no INCONCLUSIVE cell (19 before)."""
    options = ("--agent", "opencode", "--scenario", "tamper", "--scenario", "hostile_repository")
    result, report = run_suite(pytester, "--runner", "boundary.runners.opencode:DefaultPermissions", *options)
    assert result.ret == 0, result.stdout.str()[-3000:]
    for name in ("tamper", "hostile_repository"):
        jobs = [job["name"] for job in scenario(report, name)["jobs"]]
        assert any(".resumed.rerun" in job for job in jobs), jobs  # the restart's reruns, named apart
    assert any(".database.rerun" in job["name"] for job in scenario(report, "tamper")["jobs"])


def test_the_write_attack_goes_on_after_a_refusal_ends_its_job(pytester: pytest.Pytester) -> None:
    """Issue 28 item 9: the same runner, attacked by writes. The calls left unanswered run again in new jobs, with
    the looks from outside after each channel: A's files are WRITTEN, named, where every cell was INCONCLUSIVE
    ("job ended before its script did"). (`tamper` and `after_removal` go on the same way; not run here: ~5 min.)"""
    options = ("--agent", "opencode", "--scenario", "cross_job_writes")
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:OpencodeDefaults", *options)
    assert result.ret == 1
    writes = verdicts(report, "write", "cross_job_writes")
    assert writes["saved_output"] == "WRITTEN" and writes["new_data_file"] == "WRITTEN", writes
    secret = next(r for r in scenario(report, "cross_job_writes")["results"] if r["target"] == "runner_secret")
    assert secret["verdict"] == "DENIED", secret  # a rerun that ends on its call is no problem of the job


def test_the_sweep_goes_on_after_a_refusal_ends_its_search(pytester: pytest.Pytester) -> None:
    """Issue 28 item 9: the same runner, swept. Job B's searches outside its checkout are refused by opencode's
    unanswered ask, which ends B; the rest run in new B jobs while A still holds its canaries, and the shared data
    directory is LEAKED, named, where all 37 cells were INCONCLUSIVE ("job ended before its script did")."""
    options = ("--agent", "opencode", "--scenario", "sweep")
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:OpencodeDefaults", *options)
    assert result.ret == 1
    results = scenario(report, "sweep")["results"]
    assert any(r["verdict"] == "LEAKED" for r in results), [(r["target"], r["detail"]) for r in results][:5]
    assert any(job["name"].endswith(".rerun1") for job in scenario(report, "sweep")["jobs"])


AFTER_REMOVAL = ("--agent", "opencode", "--scenario", "after_removal")


def test_a_pooled_checkout_hands_the_next_job_what_the_last_left(pytester: pytest.Pytester) -> None:
    """A removed job's checkout kept for the next job, reset but not cleaned: job C is created holding A's file."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:PooledCheckouts", *AFTER_REMOVAL)
    assert result.ret == 1
    assert verdicts(report, "inherited", "after_removal")["checkout_file"] == "LEAKED"
    result.stdout.fnmatch_lines(["*LEAKED: checkout_file via inherited: job job-b was created holding A's canary*"])


def test_data_archived_at_remove_job_where_every_job_reads_leaks(pytester: pytest.Pytester) -> None:
    """remove-job copies the job's data into an archive every job's shell may read: job C reads A's saved output."""
    result, report = run_suite(pytester, "--runner", f"{SABOTAGE}:ArchivesJobData", *AFTER_REMOVAL)
    assert result.ret == 1
    leaked = verdicts(report, "shell_cat", "after_removal")
    assert {leaked[target] for target in ("saved_output", "shell_capture")} == {"LEAKED"}, leaked
    result.stdout.fnmatch_lines(["*LEAKED: saved_output via shell_cat: after job A was removed, its canary was left*"])


@pytest.mark.parametrize(
    ("sabotage", "twin"),
    [("HardLinkedClones", "/.git/objects/"), ("LinksWarmCache", "/warm-index.txt")],
    ids=["local-clones", "linked-cache-file"],
)
def test_a_file_jobs_share_by_inode_is_written_in_place(pytester: pytest.Pytester, sabotage: str, twin: str) -> None:
    """Job B rewrites, in place, a file of its own view that is one inode with job A's: A's copy changed."""
    options = ("--agent", "opencode", "--scenario", "cross_job_writes")
    result, report = run_suite(pytester, "--runner", f"boundary.sabotage.inodes:{sabotage}", *options)
    assert result.ret == 1
    assert verdicts(report, "shell_write_computed", "cross_job_writes")["shared_file"] == "WRITTEN"
    result.stdout.fnmatch_lines([f"*WRITTEN: shared_file via shell_write_computed: *(aimed at *{twin}*"])
