"""`boundary runner check COMMAND`: every verb of a runner command, answered and validated in seconds.

The runner sets up state for a throwaway repository, prepares two jobs (one's name a prefix of the other's, as
the live suite names them) and removes them; each answer is read as strictly as the live suite reads it. Then,
unless told not to, one job starts as a run would (boundary/jobs/first_job.py): a job that cannot start on this
host fails the check in seconds, in its own words.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from boundary.host import make_host
from boundary.host.base import Host, HostError
from boundary.host.own_root import changed
from boundary.layout import create_repository
from boundary.runners.check_findings import findings
from boundary.runners.command import CommandRunner
from boundary.runners.contract import Job
from boundary.runners.protocol import ProtocolError

JOB_NAMES = ("check-a", "check-a-b")
MODEL_URL = "http://127.0.0.1:9/jobs/check/v1"  # never contacted: no job starts
SECRET = "boundary-check-secret"


# Starts one job of the set-up runner in the scratch directory, on the check's host, and says how it went, or raises:
# the jobs layer's boundary.jobs.first_job.start_one, handed in by the command line (this layer cannot run jobs).
StartJob = Callable[[CommandRunner, Path, Callable[[str], None], Host], None]


def check_runner(
    command: str, sandbox: str | None, say: Callable[[str], None], start_job: StartJob | None = None
) -> list[str]:
    """Say what each verb answered, then what is wrong with the runner that no agent is needed to see (each also
    returned); raise ProtocolError at the first answer that breaks the protocol. With `start_job`, one job is then
    started as a run would (which raises when it does not start)."""
    runner = CommandRunner(command, sandbox)
    layers = ", ".join(runner.denials)
    say(f"ok describe: {runner.name}, {runner.agent.name} jobs, sandbox {runner.sandbox.name}; layers: {layers}")
    for layer, texts in runner.denials.items():  # references (`boundary:srt`) as they expanded
        say(f"   layer {layer!r}: {', '.join(repr(text) for text in texts)}")
    say(f"   expected tools: {', '.join(sorted(runner.expected_tools()))}")
    say(f"   forbidden tools: {', '.join(runner.forbidden_tools()) or 'none'}")
    with _scratch() as directory, _host(directory, say, needed=start_job is not None) as host:
        runner.run_verbs_in(tuple((host.enter_files() or ()) if host else ()))
        writes = _Writes(host, say)
        repository = create_repository(directory / "repos" / "project.git", {"README.md": "boundary check\n"})
        with writes.of("setup"):
            runner.setup(directory / "state", repository, SECRET)
        _check_secret_kept(runner.credentials())
        kept = ", ".join(str(p) for p in runner.credentials()) or "no file named (kept elsewhere)"
        say(f"ok setup: state {directory / 'state'}; {_account(runner)}; secret in {kept}")
        with writes.of("create-job"):
            jobs = [runner.create_job(name, MODEL_URL) for name in JOB_NAMES]
        for job in jobs:
            _check_job(job)
            refused = job.config_refused(runner.agent, directory / "state")
            if refused:
                raise ProtocolError(f"runner {refused}")
            say(f"ok create-job {job.name}: {_shown(job)}")
        _check_apart(jobs)
        warnings = findings(runner, jobs, directory / "state", SECRET)
        for warning in warnings:
            say(f"warn {warning}")
        warnings += _layer_switches(runner, jobs[0], say)
        for job in jobs:
            with writes.of("remove-job"):
                runner.remove_job(job)
            left = [str(p) for p in (job.checkout, job.data_dir) if p.exists()]
            say(f"ok remove-job {job.name}" + (f" (left behind: {', '.join(left)})" if left else ""))
        if start_job is not None and host is not None:
            start_job(runner, directory, say, host)
    return warnings + writes.said


class _Writes:
    """What each verb wrote on the check's host outside its directory, said as a warning: not wrong in itself (a log),
    but what the live suite then searches and attacks."""

    def __init__(self, host: Host | None, say: Callable[[str], None]) -> None:
        self.host, self.say, self.said = host, say, list[str]()

    @contextmanager
    def of(self, verb: str) -> Iterator[None]:
        before = (self.host.written() if self.host else None) or {}
        yield
        wrote = changed(before, (self.host.written() if self.host else None) or {})
        if wrote:
            shown = ", ".join(f"{path}{' (removed)' if how == 'removed' else ''}" for path, how in wrote.items())
            self.said.append(f"{verb} wrote outside STATE: {shown}")
            self.say(f"warn {self.said[-1]} (thrown away with the check's host; a run searches and attacks it)")


@contextmanager
def _host(directory: Path, say: Callable[[str], None], needed: bool) -> Iterator[Host | None]:
    """A namespace host, as a run's default: the verbs run on it, and the job starts there, as a run's would. Not
    `needed` (`--no-job`), one that cannot start (no root) leaves the verbs on this machine, said."""
    host = make_host("namespace", directory, lambda _: None)
    try:
        host.start()
    except HostError as error:
        if needed:
            raise
        say(f"warn no namespace host ({str(error).splitlines()[0]}): the verbs ran on this machine, unlisted")
        yield None
        return
    try:
        yield host
    finally:
        host.stop()


def _layer_switches(runner: CommandRunner, job: Job, say: Callable[[str], None]) -> list[str]:
    """Each claimed layer's `layer_off` (what `--layers each` turns off): a job created with it must differ from one
    without it, in what it starts or in a file it was given, or the switch turns nothing off."""
    stuck = ", ".join(runner.cannot_turn_off())
    if stuck:  # not wrong: only `--layers each` needs them
        say(f"   no layer_off for: {stuck} (`--layers each` cannot run the other layers alone)")
    said = []
    for layer in runner.description.layer_off:
        runner.turn_off(frozenset({layer}))
        try:
            off = runner.create_job(f"check-{re.sub(r'[^a-z0-9]+', '-', layer.lower()).strip('-')}-off", MODEL_URL)
        finally:
            runner.turn_off(frozenset())
        same = _launch(off, job.name, off.name) == _launch(job, job.name, off.name)
        runner.remove_job(off)
        if same:
            said.append(f"layer {layer}: its layer_off changes nothing create-job starts or writes: is it honoured?")
        else:
            say(f"ok layer_off {layer}: the job differs with it off")
    for line in said:
        say(f"warn {line}")
    return said


def _launch(job: Job, *names: str) -> tuple[str, str, dict[str, bytes]]:
    """What a job starts, and the files it was given (its own name written the same), to compare two jobs by."""

    def same_name(text: str) -> str:
        return text.replace(names[1], names[0])

    files = {}
    for root in {job.paths.runner_dir, job.data_dir, *job.files}:
        for path in [root] if root.is_file() else sorted(root.rglob("*")) if root.is_dir() else []:
            if path.is_file():
                files[same_name(str(path))] = path.read_bytes().replace(names[1].encode(), names[0].encode())
    return same_name(" ".join(job.argv)), same_name(repr(sorted(job.env.items()))), files


def _check_secret_kept(credentials: list[Path]) -> None:
    for path in credentials:
        if not path.is_file() or SECRET not in path.read_text(errors="replace"):
            raise ProtocolError(f"runner setup: field 'credentials': {path} does not hold the runner secret")


def _check_job(job: Job) -> None:
    if not (job.checkout / ".git").exists():
        raise ProtocolError(f"runner create-job {job.name}: field 'checkout': {job.checkout} is no git checkout")
    launcher = Path(job.argv[0])
    if launcher.is_absolute() and not launcher.exists():
        raise ProtocolError(f"runner create-job {job.name}: field 'argv': {launcher} does not exist")


def _check_apart(jobs: list[Job]) -> None:
    """Two jobs with one checkout cannot be told apart: nothing the live suite finds would mean anything."""
    a, b = jobs
    if a.checkout == b.checkout:
        raise ProtocolError(f"runner create-job: jobs {a.name} and {b.name} got one checkout, {a.checkout}")


def _account(runner: CommandRunner) -> str:
    """Where boundary plants the account's data for job B to reach for, or why nowhere."""
    if (db := runner.account_db()) is not None:
        return f"account database {db}"
    if (directory := runner.account_dir()) is not None:
        return f"account directory {directory} (a text file planted there)"
    return "no account data (its cross_job cells are not planned; answer account_db or account_dir if it has some)"


def _shown(job: Job) -> str:
    seen = "; seen inside at " + ", ".join(f"{host} -> {inside}" for host, inside in job.view.binds) if job.view else ""
    return f"checkout {job.checkout}, data {job.data_dir}, argv[0] {job.argv[0]}, {len(job.env)} env variables{seen}"


@contextmanager
def _scratch() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="bnd-check-"))  # short: a runner's paths may hold Unix sockets
    directory.chmod(0o711)  # as a run's: a runner may start its jobs as users of its own
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
