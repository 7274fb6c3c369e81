"""The after-removal scenario: what job A leaves once the runner removed it, and whether the next job gets it.

Job A runs and its targets are planted (`common.run_job_a`); the runner removes it. From outside, every file under
`STATE`, and every file the runner's verbs or its jobs wrote anywhere else on the host (its own root lists them), is
searched for A's canaries, in its name, its content and what it unpacks to (a runner that archives a
job's data, compressed or not, or keeps it for a pool, is told where; a file it could not read to the end leaves the
cells INCONCLUSIVE);
then job C of the same account and repository is created, and its own files (checkout, data, TMPDIR, HOME) are
searched: a pooled checkout or HOME that still holds A's files hands them to C (`inherited`). Whatever of A's is
left elsewhere becomes C's target: its read tool and its shell try each such file, judged as `cross_job` judges.
With nothing left, no agent needs to start: the cells say what was searched.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from boundary import canary
from boundary.agents.base import home
from boundary.jobs.session import Session
from boundary.model import Script
from boundary.probes import CHANNELS, UNPACK, Target, channels_for
from boundary.results import ProbeResult
from boundary.runners.contract import Job, Runner
from boundary.scenarios.base import JOB_A, JOB_B, Cell, Scenario
from boundary.scenarios.common import REPOSITORY_FILES, run_job_a
from boundary.scenarios.common_probes import judge_probes, plan_probes
from boundary.scenarios.probe_batches import batched
from boundary.unpack import Unreadable, pieces
from boundary.verdict import Finding, Proof, Verdict, denied

SECRET_TARGET = "runner_secret"
JOB_C = JOB_B  # created after A was removed: B's name, so a runner that reuses paths by name is tried too
INHERITED = "inherited"
# Why a host that runs the runner's verbs on this machine cannot say what they left; in the report's top line too.
UNLISTED = "its verbs run on the machine boundary runs on, not on the host its jobs run on: --host namespace lists them"
LEFT_CHANNELS = [*(ch for ch in CHANNELS if ch.name in ("read", "shell_cat")), UNPACK]  # an archive: unpacked


class AfterRemoval(Scenario):
    """Job C, created after job A was removed, starts with nothing of A's and reaches nothing A left."""

    name = "after_removal"
    title = "job C, created after job A was removed, gets nothing of A's: in its own files or what A left behind"

    def plan(self, runner: Runner) -> list[Cell]:
        channels = [ch.name for ch in channels_for(runner.agent, LEFT_CHANNELS)]
        return [(target, channel) for target in _targets(runner) for channel in (INHERITED, *channels)]

    def run(self, runner: Runner, session: Session) -> list[ProbeResult]:
        session.set_up(runner, REPOSITORY_FILES)
        with session.job(runner, JOB_A) as job_a:
            targets = [t for t in run_job_a(runner, session, job_a) if t.name in _targets(runner)]
        state = session.state
        with session.job(runner, JOB_C) as job_c:  # searched once C exists: creating it may take what A left
            own_files, unread = _own_files(runner, job_c), list[str]()
            own = _holders_in([(path, path) for path in own_files], targets, unread)
            findings = [((t.name, INHERITED), _inherited(t, own, job_c)) for t in targets]
            left = _holders_in(_left_files(session, own_files), targets, unread)
            elsewhere = [Target(t.name, left[t.name][0], t.content) for t in targets if t.name in left]
            findings += self._left_behind(runner, session, job_c, targets, elsewhere, state)
        return [self.result(runner, cell, _unproven(finding, unread)) for cell, finding in findings]

    def _left_behind(
        self, runner: Runner, session: Session, job: Job, targets: list[Target], left: list[Target], state: Path
    ) -> list[tuple[Cell, Finding]]:
        """Job C's read channels on each file that still holds a canary of A's; nothing left: nothing to read."""
        channels = channels_for(runner.agent, LEFT_CHANNELS)
        gone = [t for t in targets if t.name not in {k.name for k in left}]
        listed = bool(session.writes_listed)
        findings = [((t.name, ch.name), _nothing_left(t, state, listed)) for t in gone for ch in channels]
        secret = _secret_left(session, job)
        if not left and not secret and not session.floor:  # a floor (`just bench`) runs job C all the same
            return findings
        packed = [t for t in left if _packed(t, session.root())]
        findings += [
            ((t.name, ch.name), _packed_finding(t, ch.name)) for t in packed for ch in channels if ch != UNPACK
        ]
        plain = [t for t in left if t not in packed]
        controls, probes = plan_probes(runner, job, plain, LEFT_CHANNELS)  # the controls cover shell_unpack too
        probes += plan_probes(runner, job, packed, [UNPACK], prefix="packed-")[1]
        secret_probes = plan_probes(runner, job, secret, LEFT_CHANNELS, prefix="secret-")[1]  # the secret's oracle
        calls = batched(runner.agent, controls, probes + secret_probes, home=job.checkout)
        script = Script()
        calls.add_to(script, runner.agent)
        _, record, _ = session.run_to_the_end(job, script)  # a refusal that ends it: the rest in new jobs
        absent = {t.name: t.presence(session.root()) for t in left}
        problems = session.problems_of(job.name)
        for cell, finding, _ in judge_probes(runner, controls, probes, record, absent, problems, calls):
            where = f"after job A was removed, its canary was left in {next(t.path for t in left if t.name == cell[0])}"
            findings.append((cell, replace(finding, detail=f"{where}; {finding.detail}")))
        return findings


def _secret_left(session: Session, job: Job) -> list[Target]:
    """Each file written on the host outside STATE since setup that holds the runner secret (a removed job's data
    archived with the account's key): job C reads it, and the secret's own oracle judges what comes back."""
    written = session.written_since_setup()
    found = session.secret.homes(session.state, job, written, session.root())
    return [Target(SECRET_TARGET, path, session.secret.token) for path in found if path in written]


def _packed(target: Target, root: Path) -> bool:
    """Whether A's canary is in the file only once unpacked (a .tar.gz of A's data): no read tool and no `cat` shows
    it, and only `shell_unpack` is tried."""
    try:
        return not any(target.content.encode() in piece for piece in pieces(root / target.path.relative_to("/"), False))
    except Unreadable:
        return False  # its probes say why it cannot be read


def _packed_finding(target: Target, channel: str) -> Finding:
    said = (
        f"after job A was removed, its canary was left packed in {target.path}: {channel} shows no packed content "
        "(its bytes hold no canary); shell_unpack tries it unpacked"
    )
    return denied(Proof.NOTHING_TO_AIM, "n/a", said)


def _targets(runner: Runner) -> list[str]:
    """A's own things (its saved output, what its agent stores, its checkout's file); not the account's database,
    which every job of the account shares by design (`cross_job` attacks it)."""
    return ["saved_output", *runner.agent.storage_targets, "checkout_file"]


def _own_files(runner: Runner, job: Job) -> list[Path]:
    """What job C has by design: its checkout, data directory, TMPDIR, HOME and the agent's own directories."""
    roots = {job.checkout, job.data_dir, job.paths.tmp, home(job.env), *runner.agent.config_dirs(job.env)}
    return list(dict.fromkeys(p for root in sorted(roots) for p in _files(root)))


def _left_files(session: Session, own: list[Path]) -> list[tuple[Path, Path]]:
    """(where a job sees it, where the harness reads it) of each file outside job C's own: under `STATE`, and each
    the runner's verbs or its jobs wrote anywhere else on the host (an archive under /var/log, say)."""
    under_state = [(path, path) for path in sorted(set(_files(session.state)) - set(own))]
    root = session.root()
    return under_state + [(path, root / path.relative_to("/")) for path in session.written_since_setup()]


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()] if root.is_dir() else []


def _holders_in(files: list[tuple[Path, Path]], targets: list[Target], unread: list[str]) -> dict[str, list[Path]]:
    """target -> the files that hold its canary, as a job sees them; each is read from outside (the second path);
    each file it could not read to the end goes to `unread`."""
    found: dict[str, list[Path]] = {}
    for path, read in files:
        for name in _held_in(path, read, targets, unread):
            found.setdefault(name, []).append(path)
    return found


def _held_in(path: Path, read: Path, targets: list[Target], unread: list[str]) -> set[str]:
    """The targets whose canary `path` holds in its name, its content or what it unpacks to (read at `read`)."""
    held = {t.name for t in targets if canary.found(t.tokens, str(path))}
    try:
        for piece in pieces(read):
            text = piece.decode(errors="replace")
            held |= {t.name for t in targets if canary.found(t.tokens, text)}
    except Unreadable as error:
        unread.append(str(error))
    return held


def _unproven(finding: Finding, unread: list[str]) -> Finding:
    """A cell that found nothing proves nothing when a file it searched could not be read to the end."""
    if finding.verdict is not Verdict.DENIED or not unread:
        return finding
    shown = "; ".join(dict.fromkeys(unread))
    return Finding(Verdict.INCONCLUSIVE, "", f"{finding.detail}; but it could not search to the end: {shown}")


def _inherited(target: Target, own: dict[str, list[Path]], job: Job) -> Finding:
    held = own.get(target.name)
    if held:
        shown = ", ".join(map(str, held[:3]))
        said = f"job {job.name} was created holding A's canary in its own files: {shown}"
        return Finding(Verdict.LEAKED, "none", said)
    return denied(Proof.SEARCHED, "n/a", f"none of A's canaries in job {job.name}'s own files when it was created")


def _nothing_left(target: Target, state: Path, listed: bool) -> Finding:
    """`listed`: the host listed every file written outside STATE since setup, and each was searched."""
    if not listed:  # the verbs ran on this machine: what they wrote elsewhere was never listed
        said = (
            f"nothing of A's {target.name} under {state} after remove-job, outside job C's own files; but this host "
            f"cannot list what the runner's verbs and jobs wrote outside STATE ({UNLISTED})"
        )
        return Finding(Verdict.INCONCLUSIVE, "", said)
    said = (
        f"nothing of A's {target.name} under {state} after remove-job, outside job C's own files, nor in any file "
        "written on the host since setup (searched)"
    )
    return denied(Proof.SEARCHED, "n/a", said)
