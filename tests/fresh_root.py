"""A clean Debian root, as a new user's machine: what the README's quick start must work on.

debootstrap makes it with only `git ca-certificates python3 python3-pip python3-venv curl` (no Node,
no pip-installed packages, no just) and `docker import` caches it as an image, so the test costs the
quick start's own minutes, not a debootstrap each time. The one thing carried in from this machine is
its CA bundle: the registries are reached through a TLS proxy whose CA only this machine trusts, as on
a corporate network.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import subprocess
from pathlib import Path

from boundary.host.base import host_command
from boundary.host.image import mirror

REPOSITORY = "boundary-fresh"
# netbase: every Debian install has it (priority important), and its postinst writes the stock /etc/hosts.
PACKAGES = ("git", "ca-certificates", "python3", "python3-pip", "python3-venv", "curl", "netbase")
# Where the image keeps the root's own files that Docker covers in every container (its init layer shadows them).
OWN_ETC = "/usr/share/boundary-fresh/etc"
COVERED = ("hosts", "resolv.conf", "hostname")
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
# Where tools look for CAs besides the system bundle (pip and node bring their own lists).
CA_ENV = ("SSL_CERT_FILE", "PIP_CERT", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO")
BUILD_TIMEOUT_S = 1200


def readme_quick_start(readme: Path) -> tuple[list[str], str, str]:
    """(prerequisite lines, main command, test command) from the README's quick-start block, comments dropped."""
    section = readme.read_text().split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "README: no ```sh block under ## Quick start"
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.group(1).splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    main = next(line for line in lines if line.startswith("just runner-sandbox"))
    test = next(line for line in lines if line.startswith("just test"))
    return lines[: lines.index(main)], main, test


def image_tag(suite: str) -> str:
    recipe = repr((suite, PACKAGES, CA_BUNDLE.read_bytes())).encode()
    return f"{REPOSITORY}:{suite}-{hashlib.sha256(recipe).hexdigest()[:12]}"


def ensure_image(suite: str, build_dir: Path) -> str:
    """The clean root's image, built once per recipe (a few minutes) and reused."""
    tag = image_tag(suite)
    if subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0:
        return tag
    rootfs = build_dir / tag.replace(":", "-")
    subprocess.run(["rm", "-rf", str(rootfs)], check=True)
    argv = ["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", suite, str(rootfs), mirror()]
    done = host_command(argv, timeout=BUILD_TIMEOUT_S, what=f"debootstrap {suite}", fix="check the Debian mirror")
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    (rootfs / "etc/ssl/certs/ca-certificates.crt").write_bytes(CA_BUNDLE.read_bytes())
    kept = rootfs / OWN_ETC.lstrip("/")
    kept.mkdir(parents=True)
    for name in COVERED:
        if (rootfs / "etc" / name).is_file():
            (kept / name).write_bytes((rootfs / "etc" / name).read_bytes())
    with subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE) as tar:
        imported = subprocess.run(["docker", "import", "-", tag], stdin=tar.stdout, capture_output=True, text=True)
    subprocess.run(["rm", "-rf", str(rootfs)], check=True)
    assert imported.returncode == 0 and tar.returncode == 0, imported.stderr
    return tag


def quick_start_script(prerequisites: list[str], main: str, test: str) -> str:
    """What a new user types, in order, in a shell that stops at the first failure, each step timed."""
    steps = [
        "git clone -q /src /root/boundary && cd /root/boundary",
        *prerequisites,
        f"{main}",
        f"{test}",
    ]
    timed = [_timed(step) for step in steps]
    return "set -euo pipefail\nexport DEBIAN_FRONTEND=noninteractive\n" + DISTRIBUTION_ETC + "\n".join(timed) + "\n"


# Docker binds this machine's hosts, resolv.conf and hostname over the root's own (and its init layer shadows them):
# put back what the distribution wrote (netbase's hosts, with `::1 localhost`; debootstrap's resolv.conf and
# hostname; glibc's nsswitch.conf is never covered), and say which the quick start used. A root without its own
# hosts file is no stock root.
DISTRIBUTION_ETC = f"""\
for name in {" ".join(COVERED)}; do  # unbound first: never write through to the engine's copy
  if mountpoint -q /etc/$name; then umount /etc/$name; fi
  if mountpoint -q /etc/$name; then echo "[fresh] /etc/$name is still bound over the root's own" >&2; exit 1; fi
  if [[ -f {OWN_ETC}/$name ]]; then cat {OWN_ETC}/$name > /etc/$name; fi
done
test -s {OWN_ETC}/hosts || {{ echo "[fresh] the root has no /etc/hosts of its own" >&2; exit 1; }}
for file in /etc/hosts /etc/nsswitch.conf /etc/resolv.conf; do
  echo "[fresh] the root's own $file:"; sed 's/^/[fresh]   /' "$file"
done
"""


def run_in_fresh_root(tag: str, repository: Path, script: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """The script as root in a container of the clean root, on the host's network (docker here has no bridge),
    with what a root shell on a machine has: every capability (but CAP_SYS_RESOURCE, which some VMs withhold,
    so --privileged fails there), no seccomp or AppArmor filter, cgroups, and /var/lib/docker on a volume so
    the Docker engine the test command starts inside can use overlay2."""
    env = [f"--env={name}={CA_BUNDLE}" for name in CA_ENV]
    argv = [
        "docker", "run", "--rm", "--network=host", "--cgroupns=host",
        "--cap-add=ALL", "--cap-drop=SYS_RESOURCE", "--security-opt=seccomp=unconfined",
        "--security-opt=apparmor=unconfined", "--security-opt=systempaths=unconfined",
        "--volume=/sys/fs/cgroup:/sys/fs/cgroup:rw",
        f"--volume={repository}:/src:ro", "--volume=/var/lib/docker", "--tmpfs=/tmp:exec", *env,
        tag, "bash", "-c", script,
    ]  # fmt: skip
    return host_command(argv, timeout=timeout_s, what="the README's quick start in a clean root", fix="see its output")


def _timed(step: str) -> str:
    """The step, echoed as typed before it runs and with its wall time after."""
    shown = shlex.quote(step)
    return f"echo '+ '{shown}; s=$SECONDS; {step}; echo \"[fresh] $((SECONDS - s)) s:\" {shown}"
