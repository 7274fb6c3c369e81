"""What one scenario's jobs share: the model server, a work directory, the host, job execution."""

from __future__ import annotations

import contextlib
import glob
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundary import shared_defaults
from boundary.agents.base import home
from boundary.host.base import Host, Stamp
from boundary.host.health import HostHealth
from boundary.host.own_root import changed
from boundary.jobs import reruns
from boundary.jobs.job import JobDidNotStart, JobOutcome, Operator, run_job, run_terminal_job
from boundary.jobs.netns import model_url
from boundary.jobs.nettrace import read_trace
from boundary.jobs.pod import Pod
from boundary.jobs.reports import EARLY_END, job_problems
from boundary.jobs.secret import RunnerSecret
from boundary.layout import create_repository
from boundary.model import JobRecord, ModelServer, Script
from boundary.results import JobReport, VerbWrite
from boundary.runners.contract import Job, Runner, VerbsOnHost


@dataclass
class Session:
    scenario: str
    server: ModelServer
    workdir: Path
    timeout_s: float = 180.0
    trace_network: bool = True  # watch every job's network (strace: ~10% slower): proves no job touched it
    # How: "trace" (strace -f each job), or "packets" (a capture in each job's namespace, for a sandbox that
    # cannot run under ptrace; every job then runs in a namespace of its own, as a pod of one).
    network_watch: str = "trace"
    progress: Callable[[str], None] = print
    host: Host | None = None  # jobs run inside it when set
    health: HostHealth | None = None
    floor: bool = False  # every job with an empty script: what the agents cost with no probe (`just bench`)
    # What the session keeps as its jobs run, read by whoever made it once the scenario returns.
    jobs: list[JobReport] = field(default_factory=list, init=False)
    not_planted: dict[str, str] = field(default_factory=dict, init=False)  # target -> why the runner has none
    verb_writes: list[VerbWrite] = field(default_factory=list, init=False)  # what the runner's verbs wrote on the host
    secret: RunnerSecret = field(default_factory=RunnerSecret, init=False)  # handed to the runner; no job may see it
    pod: Pod | None = field(default=None, init=False)  # while set, jobs share its network, PID and mount namespaces
    _at_setup: dict[str, Stamp] = field(default_factory=dict, init=False)  # the host's own writes before setup
    # Whether the host lists what the runner's verbs and jobs write outside STATE (None: no setup yet): a host whose
    # runner verbs run on this machine (--host container, live) cannot, and nothing found there proves nothing.
    writes_listed: bool | None = field(default=None, init=False)

    @contextmanager
    def shared_namespace(self) -> Iterator[Pod]:
        """From here on, jobs run side by side in one namespace, as on one host; the harness's records hidden."""
        records = self.workdir / "transcripts"
        records.mkdir(parents=True, exist_ok=True)
        try:
            with self._new_pod(records) as pod:
                self.pod = pod
                yield pod
        finally:
            self.pod = None
            if self.health is not None:  # what its jobs left running is seen once the namespace is gone
                self.health.take(f"after {self.scenario}'s shared namespace")

    def _new_pod(self, records: Path) -> Pod:
        return Pod(self.server.socket_path, records, self._enter(), packets=self.network_watch == "packets")

    def create_job(self, runner: Runner, name: str) -> Job:
        with self._verb("create-job", name):
            job = runner.create_job(name, model_url(f"{self.scenario}.{name}"))
        refused = job.config_refused(runner.agent, self.state)
        if refused:
            self._remove(runner, job)
            raise RuntimeError(refused)
        self.secret.check_launch(job)
        return job

    @contextmanager
    def job(self, runner: Runner, name: str) -> Iterator[Job]:
        """A job the runner creates now and removes afterwards, whatever happens in between."""
        job = self.create_job(runner, name)
        try:
            # What a sandbox's defaults would let every job with this HOME share exists, as on a used host.
            with shared_defaults.present(self.root(), shared_defaults.in_home(home(job.env))):
                yield job
        finally:
            self.secret.check_files(job)
            self._remove(runner, job)

    def _remove(self, runner: Runner, job: Job) -> None:
        with self._verb("remove-job", job.name):
            runner.remove_job(job)

    @contextmanager
    def _verb(self, verb: str, job: str = "") -> Iterator[None]:
        """Run one of the runner's verbs; note what it wrote on the host (when the host can list it)."""
        before = self.host.written() if self.host is not None else None
        try:
            yield
        finally:
            after = self.host.written() if self.host is not None and before is not None else None
            for path, how in changed(before or {}, after or {}).items():
                self.verb_writes.append(VerbWrite(verb, job, path, how))

    def written_since_setup(self) -> list[Path]:
        """Every file written on the host since the runner's setup began (by its verbs or its jobs), as the host
        sees it; empty where the host cannot list its writes."""
        now = (self.host.written() if self.host is not None else None) or {}
        return [Path(path) for path, how in changed(self._at_setup, now).items() if now[path].kind == "file"]

    def root(self) -> Path:
        """The `/` of the host the jobs run on, as the harness reaches it."""
        return self.host.root() if self.host is not None else Path("/")

    @property
    def state(self) -> Path:
        """The runner's STATE: everything it creates for this scenario's jobs lives under it."""
        return self.workdir / "state"

    @property
    def repositories(self) -> Path:
        """Where the repositories jobs are cloned from are made: outside STATE, as an account's would be."""
        return self.workdir / "repos"

    def set_up(self, runner: Runner, files: dict[str, str]) -> Path:
        """A real git repository with `files`, and the runner's state for jobs of it, in this scenario's directory."""
        repository = create_repository(self.repositories / "project.git", files)
        enter = self.host.enter_files() if self.host is not None else None
        if enter is not None and isinstance(runner, VerbsOnHost):
            runner.run_verbs_in(tuple(enter))
        at_setup = self.host.written() if self.host is not None else None
        verbs_here = enter is not None and not isinstance(runner, VerbsOnHost)  # they wrote this machine, unlisted
        self._at_setup, self.writes_listed = at_setup or {}, at_setup is not None and not verbs_here
        with self._verb("setup"):
            runner.setup(self.state, repository, self.secret.token)
        return repository

    def run_to_the_end(
        self,
        job: Job,
        script: Script,
        resumed: bool = False,
        label: str = "",
        halt: Callable[[], str | None] = lambda: None,
    ) -> tuple[JobOutcome, JobRecord, str]:
        """Run the job to its end, its unanswered calls again in new jobs (`boundary.jobs.reruns`)."""
        return reruns.run_to_the_end(self, job, script, resumed, label, halt)

    def forgive_early_end(self, name: str) -> None:
        """The job's unanswered calls ran again in later jobs: its early end no longer voids the answers it gave.
        `name`: the job's, and the label of its run (`job-b.resumed`)."""
        key = f"{self.scenario}.{name}"
        for report in self.jobs:  # its reruns too: each ends early by design, on the call that ends it
            if report.name == key or report.name.startswith(f"{key}.rerun"):
                report.problems = [p for p in report.problems if EARLY_END not in p]

    def run(
        self,
        job: Job,
        script: Script,
        resumed: bool = False,
        operator: Operator | None = None,
        label: str = "",
    ) -> tuple[JobOutcome, JobRecord]:
        """Run the job to its end. `resumed`: the same job again, a new agent process (as a runner continues one).

        `operator`: the job runs on a terminal that it types into (its argv is the agent's interactive mode).
        """
        key = f"{self.scenario}.{job.name}"
        checkpoints = list(script.checkpoints.values()) if self.floor else []
        script = Script(final_text=script.final_text) if self.floor else script
        record = self.server.open_job(key, script, replace=resumed, view=job.view)
        key += label or (".resumed" if resumed else "")
        transcripts = self.workdir / "transcripts"
        transcripts.mkdir(parents=True, exist_ok=True)
        packets = self.trace_network and self.network_watch == "packets"
        trace = transcripts / f"{key}.strace" if self.trace_network and not packets else None
        calls = len(script.call_ids())
        self.progress(f"[boundary] {time.strftime('%H:%M:%S')} job {key} started: {calls} scripted tool calls")
        strays_before = len(self.server.stray)
        started_at = time.time()
        self._run_hooks(job)
        with self._watching(key), self._pod_for_packets(packets, transcripts) as pod:
            log = transcripts / f"{key}.log"
            if operator is None:
                outcome = run_job(job, self.server.socket_path, log, self.timeout_s, trace, self._enter(), pod)
            elif self.pod is not None:
                raise ValueError("a terminal job runs in its own namespaces, not in a shared one")
            else:
                socket, enter = self.server.socket_path, self._enter()
                outcome = run_terminal_job(job, socket, log, self.timeout_s, trace, operator, enter, pod)
            # while the namespace lives: the watch also checks its routing is still the one that shows every attempt
            watched = pod.packets.use(started_at, time.time()) if packets and pod and pod.packets else None
        self.progress(f"[boundary] {time.strftime('%H:%M:%S')} job {key} finished in {outcome.wall_s:.1f} s")
        floor_checkpoints(checkpoints)
        if self.health is not None and self.pod is None:  # in a pod: once it is gone (others may still run)
            self.health.take(f"after {key}")
        self.secret.check_requests(key, record.bodies)
        self.secret.search(f"job {key}'s output", outcome.transcript.read_bytes())
        problems = job_problems(key, outcome, record, self.server.stray[strays_before:])
        network = read_trace(trace) if trace else watched
        offered = sorted(record.offered_union())
        started = any(report.requested_at for report in self.jobs)  # an earlier job of this unit asked the model
        self.jobs.append(
            JobReport(
                key,
                outcome.wall_s,
                offered,
                outcome.exit_code,
                problems,
                record.latencies_s,
                network,
                started_at,
                record.requested_at,
            )
        )
        if not started and not record.requested_at:
            raise JobDidNotStart(outcome)
        return outcome, record

    @contextmanager
    def _pod_for_packets(self, packets: bool, records: Path) -> Iterator[Pod | None]:
        """The namespace the job runs in: the shared one, or with `packets` one of its own (its capture starts
        before the job does), else None (the job makes its own, traced)."""
        if self.pod is not None or not packets:
            yield self.pod
            return
        with self._new_pod(records) as pod:
            yield pod

    def _enter(self) -> tuple[str, ...]:
        return tuple(self.host.enter()) if self.host is not None else ()

    def _run_hooks(self, job: Job) -> None:
        """The runner's own steps before a job (e.g. a safety strategy), run as root on the host under test."""
        for hook in job.hooks:
            if self.host is None or not self.host.disposable:
                raise RuntimeError(
                    f"job {job.name}'s runner changes the host before it starts (a control): refused on this host; "
                    "run it with --host namespace or --host container"
                )
            result = self.host.run(hook, timeout=60)
            self.progress(f"[boundary] runner hook {hook[0]} … exited {result.returncode}")

    @contextmanager
    def _watching(self, key: str) -> Iterator[None]:
        if self.health is None:
            yield
        else:
            with self.health.watching(key):
                yield

    def schemas_offered(self, name: str) -> dict[str, dict[str, Any]]:
        """The tools the model was offered in this scenario's job `name`, each with its parameters' schema."""
        entry = self.server.lookup(f"{self.scenario}.{name}")
        return dict(entry[1].schemas) if entry else {}

    def results_of(self, name: str) -> dict[str, str]:
        """The tool results this scenario's job `name` has sent back so far."""
        entry = self.server.lookup(f"{self.scenario}.{name}")
        return entry[1].results_so_far() if entry else {}

    def session_ids_of(self, name: str) -> list[str]:
        """The session ids the agent of this scenario's job `name` named in its requests' headers."""
        entry = self.server.lookup(f"{self.scenario}.{name}")
        return sorted(entry[1].session_ids) if entry else []

    def transcripts_of(self, name: str) -> list[Path]:
        """What a run of the job printed, and each of its reruns (`name`: the job's, with its run's label)."""
        transcripts = self.workdir / "transcripts"
        key = f"{self.scenario}.{name}"
        return [transcripts / f"{key}.log", *sorted(transcripts.glob(f"{glob.escape(key)}.rerun*.log"))]

    def problems_of(self, name: str, resumed: bool = False) -> list[str]:
        """Everything that makes the job's probes prove nothing: its own run's problems and its reruns'."""
        key = f"{self.scenario}.{name}" + (".resumed" if resumed else "")
        runs = [job for job in self.jobs if job.name == key or job.name.startswith(f"{key}.rerun")]
        return [problem for job in runs for problem in job.problems] if runs else [f"job {key} never ran"]


def floor_checkpoints(checkpoints: list[Callable[[], None]]) -> None:
    """A floor job (`--boundary-floor`) ran no call; its script's checkpoints run once it is done, so what waits
    on them (the sweep's job B waits until A has planted) goes on as in a real run. Their findings mean nothing."""
    for check in checkpoints:
        with contextlib.suppress(Exception):  # a look at files no call touched: a floor run judges nothing
            check()
