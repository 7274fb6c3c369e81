"""pytest plugin of the live suite: its runners, its scenario fixtures, and its report at the end.

Loaded only by the live suite's own settings (boundary/suite/pytest.ini: `-p boundary.suite.plugin`), so other pytest
runs never see it. Its options are in options.py; the preflight and the work directory in prepare.py.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boundary.host import variant
from boundary.report.compare import compare_with
from boundary.report.record import RunRecord
from boundary.report.renderings import suite_renderings, write_each
from boundary.report.terminal import summary_lines
from boundary.runners.contract import Runner
from boundary.scenarios import get_scenario, registry
from boundary.suite import SETTINGS as SUITE_SETTINGS
from boundary.suite.options import add_options
from boundary.suite.prepare import (
    keep_or_remove,
    make_workdir,
    preflight,
    progress_writer,
    reap_leftovers,
    wording_problem,
)
from boundary.suite.runner_choice import load_runners, with_layer_alone
from boundary.suite.runs import ScenarioRuns, Unit
from boundary.toolchain import tools
from boundary.toolchain.versions import collect_versions

RUN_KEY = pytest.StashKey[RunRecord]()
UNITS_KEY = pytest.StashKey[list[Unit]]()
PREFLIGHT_PASSED = "boundary_preflight_passed"
LOADGROUP = "boundary_loadgroup"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live: runs real agent jobs (needs the pinned tools)")
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", "no") in ("no", "load"):
        config.option.dist = "loadgroup"  # a scenario's tests read its one run: they belong to one worker
    if config.getoption("--help"):
        return
    _interrupt_on_sigterm()
    os.environ[tools.SOURCE_ENV] = config.getoption("--tools")  # runner code, workers and controls read it
    _host_variant(config.getoption("--host-etc"), config.getoption("--host-ipv6"), config.getoption("--host"))
    options = ("--runner", "--sandbox", "--agent", "--runner-cmd")
    factories = load_runners(*(config.getoption(option) for option in options))
    alone = config.getoption("--layer-alone")
    if alone:
        factories = with_layer_alone(factories, alone)
    names = config.getoption("--scenario") or [name for name, kind in registry().items() if kind.in_default_run]
    try:
        scenarios = [get_scenario(name) for name in dict.fromkeys(names)]
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None
    units = [Unit(make_runner, scenario) for make_runner in factories for scenario in scenarios]
    config.stash[UNITS_KEY] = units
    runners = [make_runner() for make_runner in factories]
    problem = next(filter(None, (wording_problem(runner.name, runner.denials) for runner in runners)), None)
    if problem:
        raise pytest.UsageError(problem)
    agents = {runner.agent.name: runner.sandbox.name for runner in runners}
    record = RunRecord(runners[0].name, agents, planned=[unit.key for unit in units], layer_alone=alone)
    record.denials = {runner.agent.name: {k: list(v) for k, v in runner.denials.items()} for runner in runners}
    workerinput = getattr(config, "workerinput", {})
    record.preflight_passed = bool(workerinput.get(PREFLIGHT_PASSED))
    if workerinput.get(LOADGROUP):
        # xdist derives a worker's grouping from --dist before plugins configure, so the worker never sees the
        # controller's loadgroup: without this its nodeids lack "@scenario", the scheduler splits a scenario over
        # workers, and each runs it (two sweeps at once then find each other's records).
        config.option.loadgroup = True
    config.stash[RUN_KEY] = record


def _host_variant(files: list[str], ipv6: str, host: str) -> None:
    """`--host-etc` and `--host-ipv6`, checked now and handed to every worker's host and job through the environment."""
    if (files or ipv6 != "on") and host != "namespace":
        raise pytest.UsageError(f"--host-etc and --host-ipv6 apply to --host namespace only; got --host {host}")
    os.environ[variant.ETC_ENV] = ",".join(files)
    os.environ[variant.IPV6_ENV] = ipv6
    try:
        variant.etc_files()
    except ValueError as error:
        raise pytest.UsageError(str(error)) from None


def _interrupt_on_sigterm() -> None:
    """SIGTERM (a CI job's time limit, `kill`, `timeout`) ends the run as Ctrl-C does: each scenario's clean-up
    runs (the canaries a sweep planted on the host, its jobs, its host), where by default the process just dies."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, signal.default_int_handler)


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
    problem = "" if boundary_record.preflight_passed else _preflight(pytestconfig)  # e.g. run from elsewhere
    require(not problem, problem)
    for runner in _runners(pytestconfig):
        boundary_record.versions |= collect_versions(runner.agent, runner.sandbox)
    reap_leftovers(progress_writer(pytestconfig))
    workdir = make_workdir(os.getpid())
    runs = ScenarioRuns(
        {unit.key: unit for unit in planned_units(pytestconfig)},
        workdir,
        host_mode=pytestconfig.getoption("--host"),
        units=tuple(pytestconfig.getoption("--host-unit")),
        job_timeout_s=pytestconfig.getoption("--job-timeout"),
        floor=pytestconfig.getoption("--boundary-floor"),
        paired_floor=pytestconfig.getoption("--boundary-paired-floor"),
        progress=progress_writer(pytestconfig),
        record=boundary_record,
    )
    try:
        yield runs
    finally:  # also when a host could not boot: a failed run leaves nothing behind either
        keep_or_remove(workdir, keep=pytestconfig.getoption("--boundary-keep"))


def preflight_once(session: pytest.Session) -> None:
    """Before any job or worker starts: when this host cannot run the live suite, say why once and stop."""
    config = session.config
    if hasattr(config, "workerinput") or RUN_KEY not in config.stash:
        return  # an xdist worker: its controller checked already
    problem = _preflight(config)
    if problem:
        _write_reports(config, config.stash[RUN_KEY])
        # A UsageError is printed once ("ERROR: …") and exits 4; pytest.exit would print its text twice.
        raise pytest.UsageError(f"{problem}\n(`boundary doctor` shows every check)")


def _preflight(config: pytest.Config) -> str:
    """The pinned tools and the doctor's checks for each runner's sandbox ('' when all pass)."""
    return preflight(config.stash[RUN_KEY], (runner.sandbox.name for runner in _runners(config)))


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
    against = config.getoption("--against")
    if against is not None:  # before anything reads the verdict: `--fail-on weaker` is part of it
        record.comparison = compare_with(against, record.as_dict(), config.getoption("--fail-on"))
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
    """Each rendering whose option names a path (--boundary-report, …), all from one report dict."""
    paths = {name: config.getoption(r.suite_option, None) for name, r in suite_renderings().items()}
    write_each(record.as_dict(), paths)


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
