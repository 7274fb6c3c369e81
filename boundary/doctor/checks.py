"""What this host can run, and exactly why not (incident 5: a host that cannot sandbox).

Each check tries the real thing where it can (bwrap and unshare create their
namespaces for real), because srt only checks that its commands exist. A
failure names the cause it recognised and one exact fix; never a silent skip.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from boundary.doctor.check import Check, Ran, first_line, run
from boundary.doctor.namespaces import diagnose, read_sysctl
from boundary.doctor.node import check_node
from boundary.host import make_host
from boundary.host.base import HostError
from boundary.host.properties import LEGACY_TIOCSTI, tiocsti_meaning
from boundary.toolchain import tools

# command -> (Debian package, what needs it)
COMMANDS: dict[str, tuple[str, str]] = {
    "bwrap": ("bubblewrap", "srt"),
    "socat": ("socat", "srt and the model bridge"),
    "rg": ("ripgrep", "srt"),
    "unshare": ("util-linux", "job namespaces"),
    "setpriv": ("util-linux", "jobs and hosts that die with the harness"),
    "ip": ("iproute2", "job loopback"),
    "strace": ("strace", "the network trace"),
    "git": ("git", "repositories"),
    "perl": ("perl", "the sweep inside the jobs: kernel objects (IPC::SysV, Socket), compressed files"),
    "nsenter": ("util-linux", "running jobs inside the namespace host"),
    "dbus-daemon": ("dbus", "the namespace host's system bus"),
    "dnsmasq": ("dnsmasq-base", "the namespace host's upstream DNS"),
    "zstd": ("zstd", "searching zstd archives a job or runner leaves for the runner secret"),
}

# srt puts the shell in a network namespace; bwrap brings `lo` up itself there,
# which is exactly the step AppArmor's userns restriction refuses.
BWRAP_TRY = [
    "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
    "--unshare-net", "--unshare-pid", "--die-with-parent", "--", "/bin/true",
]  # fmt: skip


def _try_namespaces(name: str, argv: list[str]) -> Check:
    ran = run(argv, f"the {name} check")
    if ran.code == 0:
        return Check(name, True, f"`{shlex.join(argv)}` ran")
    if ran.code is None and shutil.which(argv[0]) is None:
        package = COMMANDS[argv[0]][0]
        return Check(name, False, f"{argv[0]} not on PATH", f"apt-get install {package}")
    cause, fix = diagnose(argv, ran.stderr)
    status = "no exit" if ran.code is None else f"exit {ran.code}"
    return Check(name, False, f"{cause} ({status}: {first_line(ran.stderr)})", fix)


# A runner's sandbox is any name its `describe` gives. Of those boundary knows: the sandboxes that start bwrap
# (sandbox-runtime's, codex's, plain bubblewrap) need a bwrap that can create namespaces; sandbox-runtime's also
# needs ripgrep; and the names of no sandbox at all. Any other name gets what every sandbox needs.
BWRAP_SANDBOXES = ("srt", "claude", "codex", "bwrap")
SANDBOX_COMMANDS = {"bwrap": BWRAP_SANDBOXES, "rg": ("srt", "claude", "codex")}
NO_SANDBOX = ("passthrough", "none")
# Any sandbox confines an unprivileged process: a user namespace of its own with its own /proc, and seccomp.
ESSENTIALS_TRY = [
    "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
    "unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork", "--mount-proc", "--", "/bin/true",
]  # fmt: skip
PROC_STATUS = Path("/proc/self/status")


def check_commands(sandbox: str = "srt") -> Check:
    wanted = [c for c in COMMANDS if c not in SANDBOX_COMMANDS or sandbox in SANDBOX_COMMANDS[c]]
    missing = [c for c in wanted if shutil.which(c) is None]
    if not missing:
        return Check("commands on PATH", True, ", ".join(wanted))
    detail = "missing " + ", ".join(f"{c} ({COMMANDS[c][1]})" for c in missing)
    packages = dict.fromkeys(COMMANDS[c][0] for c in missing)  # ordered, no repeats
    return Check("commands on PATH", False, detail, "apt-get install " + " ".join(packages))


def check_bwrap() -> Check:
    return _try_namespaces("bwrap namespaces", BWRAP_TRY)


def unshare_argv() -> list[str]:
    """The namespaces jobs run in (as boundary.jobs.netns builds them), around /bin/true."""
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    return ["unshare", *user, "--net", "--pid", "--fork", "--mount", "--mount-proc", "--", "/bin/true"]


def check_unshare() -> Check:
    return _try_namespaces("job namespaces", unshare_argv())


def check_unknown_sandbox(sandbox: str) -> Check:
    """Said, never failed: what boundary can and cannot check of a sandbox it does not know."""
    known = ", ".join((*BWRAP_SANDBOXES, *NO_SANDBOX))
    detail = (
        f"{sandbox!r} is none boundary knows ({known}): checked what every sandbox needs; the texts that show it "
        "failed to start are the runner's own (describe's startup_failures)"
    )
    return Check("sandbox", True, detail, info=True)


def check_user_namespaces() -> Check:
    """An unprivileged process can make a user namespace and mount its own /proc in it (every sandbox does)."""
    return _try_namespaces("unprivileged namespaces", ESSENTIALS_TRY)


def check_seccomp(status: Path = PROC_STATUS) -> Check:
    """The kernel filters system calls (a sandbox's second wall, and how srt and bwrap keep sockets shut)."""
    if any(line.startswith("Seccomp:") for line in status.read_text().splitlines()):
        return Check("seccomp", True, f"the kernel filters system calls ({status} has a Seccomp: line)")
    fix = "run on a kernel built with CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER (every distribution kernel is)"
    return Check("seccomp", False, f"{status} has no Seccomp: line: this kernel cannot filter system calls", fix)


def check_tools() -> Check:
    return check_npm_tools() if tools.source() == "npm" else check_path_tools()


def check_path_tools() -> Check:
    """`--tools path`: the agent, the sandbox and node each on PATH (the Nix dev shell puts them there)."""
    wanted = [*tools.PATH_REQUIRED, "node"]
    found = {name: shutil.which(name) for name in wanted}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        detail = "--tools path: not on PATH: " + ", ".join(missing)
        return Check("tools from PATH", False, detail, "enter the dev shell (`nix develop`), or use --tools npm")
    return Check("tools from PATH", True, ", ".join(f"{name} {path}" for name, path in found.items()))


def check_npm_tools() -> Check:
    projects = tools.PROJECTS
    missing = [p for p in projects if not p.installed()]
    if not missing:
        return Check("pinned npm tools", True, "installed for the current lockfiles under " + str(tools.cache_root()))
    detail = "not installed for the current lockfile: " + ", ".join(f"{p.name} ({p.prefix})" for p in missing)
    return Check("pinned npm tools", False, detail, "boundary tools install")


def check_host(mode: str) -> Check:
    """Boot the host the jobs will run on (0.1 s for a namespace host, about 1 s for a container), then stop it."""
    session_dir = Path(tempfile.mkdtemp(prefix="boundary-doctor-"))
    host = make_host(mode, session_dir)
    try:
        host.start()
    except HostError as error:
        first, _, rest = str(error).partition("\n")
        return Check(f"{mode} host", False, first, rest.strip().splitlines()[-1] if rest.strip() else "")
    finally:
        host.stop()
        shutil.rmtree(session_dir, ignore_errors=True)
    return Check(f"{mode} host", True, f"booted in {host.boot_s:.2f} s" if host.disposable else "system bus present")


def check_tiocsti() -> Check:
    """Reported, never failed: whether a process that shares a job's terminal can type into it (TIOCSTI).

    A kernel setting, not a namespaced one: the namespace and container hosts see this machine's value.
    """
    value = read_sysctl(LEGACY_TIOCSTI)
    return Check(
        LEGACY_TIOCSTI, True, f"{value if value is not None else 'absent'} — {tiocsti_meaning(value)}", info=True
    )


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "runners"
IMAGE_SCRIPT = EXAMPLES / "podman" / "image.sh"


@dataclass(frozen=True)
class ExampleNeeds:
    """What an example runner needs on this host: its engine's command, and the image.sh view of its image."""

    engine: str  # the command on PATH
    image_flag: str  # image.sh's flag that prints the image when it is built, and says how when not
    packages: str  # the Debian packages that bring the engine and the image's recipe
    host_plan: Path | None = None  # the example's own script that says what its engine needs of this host


EXAMPLE_NEEDS = {
    "podman": ExampleNeeds("podman", "--check", "podman runc debootstrap", EXAMPLES / "podman" / "host.mjs"),
    "gvisor": ExampleNeeds("runsc", "--rootfs", "runsc debootstrap"),
}


def check_example(sandbox: str, info: bool) -> Check:
    """What an example runner (`sandbox`: podman, gvisor) needs: its engine, and its job image (built once by
    `just runner-image`). Reported only (`info`), unless the run asks for that sandbox."""
    needs, name = EXAMPLE_NEEDS[sandbox], f"{sandbox} example runner"
    fix = f"apt-get install {needs.packages} && just runner-image"
    if shutil.which(needs.engine) is None:
        problem = f"{needs.engine} is not on PATH"
    else:
        ran = run(["bash", str(IMAGE_SCRIPT), needs.image_flag], f"the {sandbox} example's image check")
        planned = _host_plan(needs)
        if ran.code == 0 and planned.code == 0:
            ready = f"{needs.engine} and its job image {ran.stdout.strip()}: ready"
            return Check(name, True, f"{ready}{'; ' if planned.stdout else ''}{planned.stdout.strip()}", info=info)
        problem = first_line(ran.stderr) or first_line(planned.stderr) or "its job image is not built"
    if info:
        return Check(name, True, f"not ready: {problem} (to use it: {fix})", info=True)
    return Check(name, False, problem, fix)


def _host_plan(needs: ExampleNeeds) -> Ran:
    """What the example's engine needs of this host, in the example's own words (empty when it has no such script)."""
    if needs.host_plan is None:
        return Ran(0, "", "")
    try:
        node = str(tools.node())  # the Node boundary puts first on a runner's PATH
    except tools.ToolsError as error:
        return Ran(None, "", str(error))
    return run([node, str(needs.host_plan)], f"{needs.host_plan.name}, the example's host plan")


def run_checks(sandbox: str = "srt", host: str | None = "namespace", examples: bool = False) -> list[Check]:
    """Every check, in order; the host is tried last of those that can fail, and only when everything it needs is
    there (None: skip); then what is reported only (`examples`: what the example runners need, too)."""
    checks = [check_commands(sandbox), check_tools(), check_node()]
    if sandbox in BWRAP_SANDBOXES:
        checks.append(check_bwrap())
    elif sandbox not in NO_SANDBOX:
        checks += [check_unknown_sandbox(sandbox), check_user_namespaces(), check_seccomp()]
    if sandbox in EXAMPLE_NEEDS:
        checks.append(check_example(sandbox, info=False))
    checks.append(check_unshare())
    if host is not None and all(check.ok for check in checks):
        checks.append(check_host(host))
    extra = [check_example(name, info=True) for name in EXAMPLE_NEEDS if examples and name != sandbox]
    return [*checks, check_tiocsti(), *extra]


def format_checks(checks: list[Check]) -> list[str]:
    return [_format(check) for check in checks]


def _format(check: Check) -> str:
    if check.info:
        return f"info {check.name}: {check.detail}"
    if check.ok:
        return f"ok   {check.name}: {check.detail}"
    return f"FAIL {check.name}: {check.detail}" + (f" — fix: {check.fix}" if check.fix else "")


def first_problem(checks: list[Check]) -> str | None:
    """The one line to show when the live suite cannot run here."""
    failing = next((check for check in checks if not check.ok), None)
    return None if failing is None else f"cannot run here: {_format(failing).removeprefix('FAIL ')}"
