"""Sabotaged runners: each removes one defence, and the harness must report it.

Select one with `--runner boundary.sabotage.runners:NAME`. They exist to prove
the harness can fail; a green run against any of them is a harness defect.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, ClassVar

from boundary.agents.opencode import GUARD_PLUGIN
from boundary.layout import JobPaths, git
from boundary.runners.contract import Job
from boundary.runners.opencode import OpencodeRunner
from boundary.sandboxes import ShellPolicy, Srt


class NoPlugin(OpencodeRunner):
    """No runner plugin: the file tools follow a symlink out of the checkout."""

    name = "no-plugin"

    def plugins(self, paths: JobPaths) -> list[Any]:
        return []


class UnnamedSecret(NoPlugin):
    """Keeps the account's key where the reference runner does but names no file for it (its `credentials` say it
    keeps it elsewhere), and has no guard, so the file tools follow a symlink in the checkout anywhere: only a
    search for the key from outside makes that file a target (issue 28)."""

    name = "unnamed-secret"

    def credentials(self) -> list[Path]:
        return []

    def keep_secret(self, secret: str) -> None:
        kept = self._layout().account_dir / "credentials"
        kept.touch(mode=0o600)
        kept.write_text(secret + "\n")


class SharedDataDir(OpencodeRunner):
    """One data directory for every job of the account (incident 1)."""

    name = "shared-data-dir"

    def job_paths(self, name: str) -> JobPaths:
        paths = super().job_paths(name)
        return JobPaths(name, paths.checkout, paths.checkout.parent / "shared.data", paths.private, paths.scratch)


class AllowAllDirectories(OpencodeRunner):
    """Agent permissions that allow every external directory: one layer gone."""

    name = "allow-all-directories"

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        return {"external_directory": "allow"}


class PhonesHome(OpencodeRunner):
    """Forgets to keep opencode quiet: it tries to fetch its model catalog at start."""

    name = "phones-home"

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        env = super().job_env(paths, shell)
        env.pop("OPENCODE_DISABLE_MODELS_FETCH")
        return env


class PhonesHomeSeenByPackets(PhonesHome):
    """The same, for a runner whose jobs boundary watches by packets (`network_watch`), not by strace."""

    name = "phones-home-packets"
    network_watch = "packets"


class SendsADatagram(OpencodeRunner):
    """Its launcher sends a datagram by write(2) on a connected UDP socket (bash's /dev/udp) before the agent
    starts: no sendto, no address in the call, only the socket's peer (issue 56 item 7)."""

    name = "sends-a-datagram"

    def launch_argv(self, paths: JobPaths, agent_argv: list[str]) -> list[str]:
        send = 'exec 3>/dev/udp/127.0.0.1/9 && echo boundary >&3; exec 3>&-; exec "$@"'
        return ["bash", "-c", send, "launcher", *super().launch_argv(paths, agent_argv)]


class ConfigInReach(OpencodeRunner):
    """Yesterday's reference runner (incidents 6 and 7): the files that configure the job live in its own data
    directory, which its permission rule and guard allow; nothing in the checkout is protected; the agent starts
    without its launcher, and project configuration is on."""

    name = "config-in-reach"

    def job_paths(self, name: str) -> JobPaths:
        paths = super().job_paths(name)  # no private directory: the runner's files go in data
        return JobPaths(name, paths.checkout, paths.data, scratch=paths.scratch)

    def plugins(self, paths: JobPaths) -> list[Any]:
        options = {"roots": [str(paths.checkout), str(paths.data)], "forbiddenTools": list(self.removed_tools())}
        return [[self.guard_uri(), options]]

    def protected_paths(self, paths: JobPaths) -> list[Path]:
        return []

    def launch_argv(self, paths: JobPaths, agent_argv: list[str]) -> list[str]:
        return agent_argv

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        return self.agent.env(paths, self.account_db(), shell)


class LoadsProjectConfig(OpencodeRunner):
    """Starts the agent straight away, project configuration on: whatever the repository carries for the agent
    is loaded in the unconfined agent process (incident 7)."""

    name = "loads-project-config"

    def launch_argv(self, paths: JobPaths, agent_argv: list[str]) -> list[str]:
        return agent_argv

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        return self.agent.env(paths, self.account_db(), shell)


class WritesOtherJobs(OpencodeRunner):
    """A guard and permission rule that let the job's file tools write anywhere under the runner's state."""

    name = "writes-other-jobs"

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        return {**super().permission(paths), "external_directory": "allow"}

    def plugins(self, paths: JobPaths) -> list[Any]:
        state = str(self._layout().state)
        options = {"roots": [state], "writeRoots": [state], "forbiddenTools": list(self.removed_tools())}
        return [[self.guard_uri(), options]]


class SrtAsItComes(Srt):
    """srt's defaults kept: the shell's TMPDIR is /tmp/claude, and /tmp/claude writable, in every sandbox."""

    def unshared_writes(self) -> list[str]:
        return []

    def own_tmpdir(self) -> list[str]:
        return []


class WithSrtVariant(OpencodeRunner):
    """The opencode reference runner with srt set up otherwise (`variant`), where srt is its sandbox."""

    variant: ClassVar[type[Srt]]

    def __init__(self, sandbox: str | None = None) -> None:
        super().__init__(sandbox)
        if self.sandbox.name == "srt":
            self.sandbox = self.variant()


class KeepsSrtTmpdir(WithSrtVariant):
    """The reference runner as it was: its shell under srt as srt comes. On a host where /tmp/claude exists (the
    harness makes it), every job's `$TMPDIR` is that one directory: what job A leaves there, job B reads."""

    name = "keeps-srt-tmpdir"
    variant = SrtAsItComes


class SecretInEnv(OpencodeRunner):
    """Hands the account's credential to the job in its environment (as many runners hand an API key): any
    shell call of the job prints it."""

    name = "secret-in-env"

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        secret = self.credentials()[0].read_text().strip()
        return {**super().job_env(paths, shell), "RUNNER_API_KEY": secret}


class OpencodeDefaults(SharedDataDir):
    """opencode as a published runner starts it: its default permissions, no guard, no OS sandbox, one data
    directory for the account. opencode asks before leaving the checkout; in `opencode run` nobody answers, and
    the refused ask ends the run after its current batch of calls: the harness must go on probing in new jobs."""

    name = "opencode-defaults"
    default_sandbox = "passthrough"

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        return {}

    def plugins(self, paths: JobPaths) -> list[Any]:
        return []


class PrefixGuard(OpencodeRunner):
    """The guard compares paths as strings (`startsWith(root)`, the class of Claude Code CVE-2025-54794): job B's
    roots `…/job-b` and `…/job-b.data` are string prefixes of job A's `…/job-b.data-a` and `…/job-b.data-a.data`,
    so B's file tools read A's checkout and saved output."""

    name = "prefix-guard"

    def guard_uri(self) -> str:
        naive = self._layout().state / "prefix-guard.js"
        if not naive.exists():
            text = GUARD_PLUGIN.read_text()
            exact = "p.startsWith(root + path.sep)"
            if exact not in text:
                raise RuntimeError(f"the guard no longer compares roots as `{exact}`: update this sabotage")
            naive.write_text(text.replace(exact, "p.startsWith(root)"))
        return naive.as_uri()


class PooledCheckouts(OpencodeRunner):
    """Keeps a removed job's checkout for the next job, as runners that pool warm checkouts do, and hands it over
    with `git reset --hard` but no `git clean`: what the last job left untracked is the next job's (issue 28)."""

    name = "pooled-checkouts"

    def pool(self) -> Path:
        return self._layout().state / "pool"

    def remove_job(self, job: Job) -> None:
        self.pool().mkdir(exist_ok=True)
        job.paths.checkout.rename(self.pool() / f"checkout-{len(list(self.pool().iterdir()))}")
        super().remove_job(job)

    def checked_out(self, name: str) -> JobPaths:
        pooled = sorted(self.pool().iterdir()) if self.pool().is_dir() else []
        if not pooled:
            return super().checked_out(name)
        paths = self.job_paths(name)
        pooled[0].rename(paths.checkout)
        git("reset", "-q", "--hard", cwd=paths.checkout)
        paths.create_dirs()
        return paths


class ArchivesJobData(OpencodeRunner):
    """At remove-job, copies the job's data directory into one archive of the account's "for debugging", which every
    job's shell may read: what a removed job saved, the next job reads (issue 28)."""

    name = "archives-job-data"

    def archive(self) -> Path:
        return self._layout().account_dir / "archive"

    def remove_job(self, job: Job) -> None:
        shutil.copytree(job.data_dir, self.archive() / job.name, symlinks=True, dirs_exist_ok=True)
        super().remove_job(job)

    def shell_policy(self, paths: JobPaths) -> ShellPolicy:
        policy = super().shell_policy(paths)
        self.archive().mkdir(parents=True, exist_ok=True)  # srt binds only what exists
        policy.allow_read.append(self.archive())
        return policy

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        """The archive allowed to the agent's shell as well, as the debugging it is kept for needs."""
        permission = super().permission(paths)
        allowed = {**permission["external_directory"], f"{self.archive()}/*": "allow"}
        return {**permission, "external_directory": allowed}


class HomeOutsideState(OpencodeRunner):
    """Every job of the runner gets one HOME outside STATE (`/home/runner`, as a runner on a CI machine may): the
    agent would load every job's configuration from there, where boundary may not rewrite it to attack it. The run
    refuses the job, naming the directory (issue 28, item 6)."""

    name = "home-outside-state"
    home = Path("/home/boundary-runner")

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        env = super().job_env(paths, shell)
        env.pop("XDG_CONFIG_HOME", None)  # opencode's config then lies under HOME, as by default
        return {**env, "HOME": str(self.home)}
