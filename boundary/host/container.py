"""A disposable systemd host in a container (testcontainers, Ryuk disabled, `--network none`).

Unlike the namespace host, systemd is PID 1 here: services restart (or don't) as they would on a
real machine, and a short `WatchdogSec` makes systemd-resolved die by itself once it can no longer
reach systemd (incident 3). Jobs and probes enter the container's namespaces with nsenter, so they
keep the harness's environment; everything they need is bind-mounted at the same path as here — only
that (the interpreter, its standard library and site-packages, node, the harness, the pinned tools),
never a whole prefix: a distribution Python's is /usr, and mounting it hid the image's own system.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from boundary import proc
from boundary.host.base import CANARY_NAME, RESTART_SETTLE_S, Host, HostError, NsenterHost, host_command
from boundary.host.image import ensure_image
from boundary.host.mounts import shared_paths

LABEL = "boundary.host"
BOOT_TIMEOUT_S = 30.0
DOCKER_FIX = "apt-get install docker.io, then start the engine: dockerd --bridge=none --iptables=false &"

RUN_KWARGS: dict[str, Any] = {
    "network_mode": "none",
    "cap_add": ["SYS_ADMIN", "NET_ADMIN"],
    "security_opt": ["seccomp=unconfined", "apparmor=unconfined"],
    "cgroupns": "host",  # --privileged fails on some VMs; these are the flags systemd needs
    "stop_signal": "SIGRTMIN+3",
    "dns": ["127.0.0.53"],
}


def docker_problem() -> str:
    """Why no container can start here ('' when the engine answers)."""
    if shutil.which("docker") is None:
        return f"no `docker` command on PATH. Fix: {DOCKER_FIX}"
    argv = ["docker", "version", "-f", "{{.Server.Version}}"]
    try:
        done = proc.run(argv, timeout=30, what="the Docker engine to answer")
    except proc.ProcTimeout as error:
        return f"{error.problem} Fix: {DOCKER_FIX}"
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        return f"no Docker engine answers ({said}). Fix: {DOCKER_FIX}"
    return ""


def new_host(session_dir: Path, progress: Callable[[str], None]) -> Host:
    """This kind's factory in the `--host` registry (boundary/host/__init__.py)."""
    return ContainerHost(session_dir / "host", session_dir, progress)


class ContainerHost(NsenterHost):
    """`ContainerHost(workdir, session_dir).start()`; jobs run inside with `enter()`."""

    name = "container"
    disposable = True
    namespaces = ("-m", "-n", "-p", "-u", "-i")

    def __init__(self, workdir: Path, session_dir: Path, progress: Callable[[str], None] = print) -> None:
        self.workdir = Path(workdir).resolve()
        self.session_dir = Path(session_dir).resolve()
        self.progress = progress
        self.boot_s = 0.0
        self.pid = 0
        self._container: Any = None

    def start(self) -> ContainerHost:
        problem = docker_problem()
        if problem:
            raise HostError(f"--host container: {problem}")
        mounts = shared_paths(self.session_dir)  # a refused mount fails before a minute of image build
        tag = ensure_image(self.progress)
        self.workdir.mkdir(parents=True, exist_ok=True)
        began = time.monotonic()
        self._container = self._define(tag, mounts).start()
        try:
            self.pid = self._inspect_pid()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.boot_s = time.monotonic() - began
        return self

    def _define(self, tag: str, mounts: dict[Path, str]) -> Any:
        from testcontainers.core.config import testcontainers_config
        from testcontainers.core.container import DockerContainer

        testcontainers_config.ryuk_disabled = True  # its reaper image cannot be pulled; we reap by label
        labels = {LABEL: "1", "boundary.pid": str(os.getpid())}
        container = DockerContainer(tag).with_kwargs(**RUN_KWARGS, labels=labels)
        container.with_volume_mapping("/sys/fs/cgroup", "/sys/fs/cgroup", "rw")
        for path, mode in mounts.items():
            container.with_volume_mapping(str(path), str(path), mode)
        return container.with_tmpfs_mount("/run").with_tmpfs_mount("/run/lock")

    def _inspect_pid(self) -> int:
        """The host-view PID of the container's PID 1 (testcontainers' attrs are from before the start)."""
        wrapped = self._container.get_wrapped_container()
        wrapped.reload()
        return int(wrapped.attrs["State"]["Pid"])

    def _wait_ready(self) -> None:
        """systemd has finished booting with nothing failed, and the canary resolves."""
        seen: list[str] = []

        def settled() -> str | None:
            # Empty until systemd listens on its private socket, "offline" until it is PID 1's program at all.
            seen.append(self._system_state())
            return None if seen[-1] in ("", "offline") else seen[-1]

        state = proc.wait_until(settled, BOOT_TIMEOUT_S, interval_s=0.02) or seen[-1]
        if state != "running":
            failed = self.run(["systemctl", "--failed", "--no-legend", "--plain"]).stdout.strip()
            raise HostError(
                f"container host: expected systemd to reach 'running'; saw {state!r} "
                f"(failed units: {failed or 'none'}). "
                f"Fix: read `docker logs {self._container.get_wrapped_container().short_id}`"
            )
        if self.run(["getent", "hosts", CANARY_NAME]).returncode != 0:
            raise HostError(f"container host: expected {CANARY_NAME} to resolve inside after boot; it does not")

    def _system_state(self) -> str:
        return self.run(["systemctl", "is-system-running", "--wait"], timeout=BOOT_TIMEOUT_S).stdout.strip()

    def stop(self) -> None:
        container, self._container = self._container, None
        if container is not None:
            container.stop()  # removes the container and its anonymous volumes

    @property
    def _fix(self) -> str:
        named = f" {self._container.get_wrapped_container().short_id}" if self._container is not None else ""
        return f"the host may be wedged: read `docker logs{named}`"

    def written(self) -> None:
        """Not listed (yet): the container's own layer is docker's."""
        return None

    def enter_files(self) -> None:
        """The runner's command is not in the container: its verbs run on this machine."""
        return None

    def restart_resolved(self) -> None:
        """`systemctl restart` waits until resolved is up or its start failed; either is for the checks to judge."""
        self.run(["systemctl", "restart", "systemd-resolved.service"], timeout=30)
        time.sleep(RESTART_SETTLE_S)  # "up" can still fall over once it reaches for the bus


def reap_containers() -> None:
    """Remove host containers of earlier runs whose harness process is gone (killed before it cleaned up)."""
    if shutil.which("docker") is None:
        return
    listed = host_command(
        ["docker", "ps", "-a", "--filter", f"label={LABEL}", "--format", '{{.ID}} {{.Label "boundary.pid"}}'],
        timeout=30,
        what="the Docker engine to list earlier host containers",
        fix=DOCKER_FIX,
    )
    for line in listed.stdout.splitlines():
        container, _, pid = line.partition(" ")
        if not (pid.isdigit() and Path(f"/proc/{pid}").exists()):
            what = f"the Docker engine to remove the leftover host container {container}"
            host_command(["docker", "rm", "-f", container], timeout=60, what=what, fix=DOCKER_FIX)
