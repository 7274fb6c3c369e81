"""pytest plugin: options, the shared model server and session, scenario fixtures, the report."""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from boundary import doctor, tools
from boundary.crossjob import ProbeResult, run_cross_job
from boundary.host import HOST_MODES, make_host
from boundary.host.base import Host, HostError
from boundary.host.container import reap_containers
from boundary.host.health import HostHealth, host_report
from boundary.host.services import DEFAULT_UNITS
from boundary.model import ModelServer
from boundary.offered import OfferedTools
from boundary.report import RunRecord, summary_lines
from boundary.runner import Runner
from boundary.session import Session
from boundary.versions import collect_versions

WORKDIR_PREFIX = "boundary-run-"
RUN_KEY = pytest.StashKey[RunRecord]()
RUNNER_KEY = pytest.StashKey[Runner]()
DEFAULT_RUNNER = "boundary.runner:ReferenceRunner"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("boundary", "live sandbox boundary tests")
    group.addoption(
        "--runner",
        default=DEFAULT_RUNNER,
        metavar="MODULE:ATTR",
        help=f"the runner under test: a callable taking sandbox=NAME (default: {DEFAULT_RUNNER})",
    )
    group.addoption(
        "--sandbox",
        default="srt",
        metavar="NAME",
        help="the OS sandbox around the job's shell: srt (default) or passthrough (confines nothing)",
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
        "--boundary-keep",
        action="store_true",
        help="keep the run's work directory (checkouts, transcripts) for inspection",
    )


def load_runner(spec: str, sandbox: str) -> Runner:
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise pytest.UsageError(f"--runner expects MODULE:ATTR (e.g. {DEFAULT_RUNNER}), got {spec!r}")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
        runner = factory(sandbox=sandbox)
    except (ImportError, AttributeError, ValueError, TypeError) as error:
        raise pytest.UsageError(f"--runner {spec}: cannot build a runner with sandbox={sandbox!r}: {error}") from error
    if not isinstance(runner, Runner):
        raise pytest.UsageError(f"--runner {spec}: {runner!r} does not implement boundary.runner.Runner")
    return runner


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live: runs real agent jobs (needs the pinned tools)")
    if config.getoption("--help"):
        return
    runner = load_runner(config.getoption("--runner"), config.getoption("--sandbox"))
    config.stash[RUNNER_KEY] = runner
    config.stash[RUN_KEY] = RunRecord(
        runner.name, runner.agent.name, runner.sandbox.name, claimed_layers=list(runner.denials)
    )


def require(ok: object, message: str) -> None:
    """Fail a live check with just its message: the reader needs the finding, not a traceback."""
    if not ok:
        pytest.fail(message, pytrace=False)


def scenario_id(config: pytest.Config) -> str:
    runner = config.stash[RUNNER_KEY]
    return f"{runner.agent.name}-{runner.sandbox.name}"


@pytest.fixture(scope="session")
def boundary_runner(pytestconfig: pytest.Config) -> Runner:
    return pytestconfig.stash[RUNNER_KEY]


@pytest.fixture(scope="session")
def boundary_record(pytestconfig: pytest.Config) -> RunRecord:
    return pytestconfig.stash[RUN_KEY]


@pytest.fixture(scope="session")
def boundary_session(
    pytestconfig: pytest.Config, boundary_record: RunRecord, boundary_runner: Runner
) -> Iterator[Session]:
    """The model server and work directory every live scenario of this session shares."""
    if hasattr(pytestconfig, "workerinput"):
        pytest.fail("the live suite runs in one process (its jobs share one model server): run it without -n", False)
    _preflight(boundary_runner, boundary_record)
    boundary_record.versions = collect_versions(boundary_runner)
    reap_leftovers()
    workdir = Path(tempfile.mkdtemp(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-"))
    progress = _progress_writer(pytestconfig)
    try:
        with (
            ModelServer(workdir / "model.sock") as server,
            _booted(pytestconfig, workdir, boundary_record, progress) as host,
        ):
            session = Session(server, workdir, pytestconfig.getoption("--job-timeout"), boundary_record.jobs)
            units = (*DEFAULT_UNITS, *pytestconfig.getoption("--host-unit"))
            session.progress, session.host, session.health = progress, host, HostHealth(host, units)
            progress(f"[boundary] host {host.name} up in {host.boot_s:.2f} s; taking the baseline")
            session.health.take("at baseline")
            yield session
            session.health.close()
    finally:  # also when the host could not boot: a failed run leaves nothing behind either
        _keep_or_remove(pytestconfig, workdir)


def _keep_or_remove(config: pytest.Config, workdir: Path) -> None:
    if config.getoption("--boundary-keep"):
        print(f"\n[boundary] work directory kept: {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def cross_job(
    boundary_session: Session, boundary_runner: Runner, boundary_record: RunRecord
) -> dict[tuple[str, str], ProbeResult]:
    """Run the cross-job scenario once; its results keyed by (target, channel)."""
    try:
        results = run_cross_job(boundary_runner, boundary_session)
    except Exception as error:
        boundary_record.errors.append(f"cross-job scenario could not run: {error}")
        raise
    boundary_record.results.extend(results)
    return {(r.target, r.channel): r for r in results}


@pytest.fixture(scope="session")
def offered_tools(
    cross_job: object, boundary_session: Session, boundary_runner: Runner, boundary_record: RunRecord
) -> OfferedTools:
    """Every tool name offered to the model in every request of every job so far."""
    offered = frozenset(t for job in boundary_session.jobs for t in job.offered_tools)
    check = OfferedTools(boundary_runner.expected_tools(), offered, boundary_runner.forbidden_tools())
    boundary_record.offered = check
    return check


@contextmanager
def _booted(config: pytest.Config, workdir: Path, record: RunRecord, progress: Callable[[str], None]) -> Iterator[Host]:
    """The host the jobs run on, booted for this session and torn down after it."""
    host = make_host(config.getoption("--host"), workdir, progress)
    try:
        host.start()
    except HostError as error:
        record.errors.append(str(error).splitlines()[0])
        pytest.fail(str(error), pytrace=False)
    try:
        yield host
    finally:
        host.stop()


@pytest.fixture(scope="session")
def host_health(cross_job: object, boundary_session: Session, boundary_record: RunRecord) -> HostHealth:
    """After the jobs: restart systemd-resolved as systemd would (latent damage shows only then), check again."""
    health, host = boundary_session.health, boundary_session.host
    assert health is not None and host is not None, "the session has no host"
    health.restarted_by_us.add("systemd-resolved.service")
    host.restart_resolved()
    health.take("after restarting systemd-resolved")
    boundary_record.host = host_report(host.name, host.boot_s, health)
    return health


def _preflight(runner: Runner, record: RunRecord) -> None:
    """Install the pinned tools, then fail every live test in seconds, with the fix, if this host cannot run them."""
    try:
        tools.install_all()
    except tools.ToolsError as error:
        record.errors.append(str(error))
        raise
    # The host is not tried here: the session boots it next and fails the same way if it cannot.
    problem = doctor.first_problem(doctor.run_checks(runner.sandbox.name, host=None))
    if problem:
        record.errors.append(problem)
        pytest.fail(f"{problem}\n(`boundary doctor` shows every check)", pytrace=False)


def reap_leftovers() -> None:
    """Remove work directories and host containers of earlier runs whose process is gone (killed mid-run)."""
    reap_containers()
    for leftover in Path(tempfile.gettempdir()).glob(f"{WORKDIR_PREFIX}*"):
        pid = leftover.name.removeprefix(WORKDIR_PREFIX).split("-")[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(leftover, ignore_errors=True)


def _progress_writer(config: pytest.Config) -> Callable[[str], None]:
    """Job start/finish lines straight to the terminal, past output capture, so a long job never looks hung."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        return lambda message: None

    def write(message: str) -> None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(message)

    return write


def pytest_sessionfinish(session: pytest.Session) -> None:
    record = session.config.stash.get(RUN_KEY, None)
    if record is None or not _was_used(record):
        return
    writers = {
        "--boundary-report": record.write_json,
        "--boundary-html": record.write_html,
        "--boundary-markdown": record.write_markdown,
    }
    for option, write in writers.items():
        path = session.config.getoption(option, None)
        if path is not None:
            write(path)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    record = config.stash.get(RUN_KEY, None)
    if record is None or not _was_used(record):
        return
    terminalreporter.section("boundary")
    for line in summary_lines(record):
        terminalreporter.write_line(line)


def _was_used(record: RunRecord) -> bool:
    return bool(record.results or record.jobs or record.errors)
