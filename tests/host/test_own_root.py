"""The namespace host's own root (boundary/host/own_root.py): what becomes of each mount, and what counts as written.

Live parts boot a real namespace host: a write anywhere on it is listed and never reaches this machine, while the
unit's directory is this machine's own, written through and listed nowhere.
"""

from __future__ import annotations

from pathlib import Path

from boundary.host.base import Stamp
from boundary.host.namespace import NamespaceHost
from boundary.host.own_root import changed, mount_plan, mounts

# Abridged from this kind of machine (Docker's root is one ext4; /home a second disk; a file bound over /etc).
MOUNTINFO = """\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
23 22 0:21 / /proc rw,nosuid - proc proc rw
24 22 0:22 / /sys rw - sysfs sysfs rw
25 24 0:23 / /sys/fs/cgroup ro - tmpfs tmpfs ro
26 22 0:5 / /dev rw - devtmpfs devtmpfs rw
27 22 0:24 / /run rw - tmpfs tmpfs rw
28 27 0:4 net:[4026531833] /run/docker/netns/default rw - nsfs nsfs rw
29 22 254:16 / /home rw - ext4 /dev/vdb rw
30 22 254:0 /var/lib/docker /var/lib/docker rw shared:1 - ext4 /dev/vda rw
31 22 254:0 /etc/hosts /etc/hosts rw - ext4 /dev/vda rw
32 22 0:25 / /tmp/with\\040space rw - tmpfs tmpfs rw
33 22 0:26 / /srv/odd,name rw - tmpfs tmpfs rw
34 22 0:27 / /mnt/binfmt rw - binfmt_misc binfmt_misc rw
35 22 0:28 / /tmp/bnd-run-1/u0 rw - tmpfs tmpfs rw
36 29 0:29 / /home/user rw - tmpfs tmpfs rw
37 22 0:30 / /home rw - xfs /dev/vdc rw
"""


def test_each_mount_below_the_root_gets_a_layer_or_a_bind_parents_first(tmp_path: Path) -> None:
    for directory in ("home", "var/lib/docker", "tmp/with space", "srv/odd,name", "mnt/binfmt", "home/user"):
        (tmp_path / directory).mkdir(parents=True)
    info = MOUNTINFO.replace(" /home ", f" {tmp_path}/home ").replace(" /var/", f" {tmp_path}/var/")
    info = info.replace(" /tmp/with", f" {tmp_path}/tmp/with").replace(" /srv/", f" {tmp_path}/srv/")
    info = info.replace(" /mnt/", f" {tmp_path}/mnt/").replace(" /home/user ", f" {tmp_path}/home/user ")
    plan = [tuple(line.split("\t")) for line in mount_plan(info, Path("/tmp/bnd-run-1/u0")).splitlines()]
    assert {path: kind for kind, path in plan} == {
        f"{tmp_path}/home": "overlay",  # the topmost of the two mounts there, once
        f"{tmp_path}/var/lib/docker": "overlay",
        "/etc/hosts": "file",  # a mount of one file: copied into the root's layer
        f"{tmp_path}/tmp/with space": "overlay",  # mountinfo's octal escapes undone
        f"{tmp_path}/srv/odd,name": "readonly",  # a comma would split overlay's options: bound read-only
        f"{tmp_path}/mnt/binfmt": "bind",  # the kernel's own
        f"{tmp_path}/home/user": "overlay",
    }  # /proc, /sys, /dev, /run and the unit's directory are the init script's to mount, not the plan's
    paths = [path for _, path in plan]
    assert paths.index(f"{tmp_path}/home") < paths.index(f"{tmp_path}/home/user")  # parents first


def test_a_mount_seen_twice_is_the_last_one_mounted() -> None:
    assert [m.filesystem for m in mounts(MOUNTINFO) if m.point == "/home"] == ["xfs"]


def test_a_write_is_a_new_or_changed_entry_and_a_whiteout_is_a_removal() -> None:
    before = {"/etc/passwd": Stamp("file", 10, 1, 5), "/var/log": Stamp("dir", 0, 1, 6)}
    after = {
        "/etc/passwd": Stamp("file", 10, 1, 5),  # the harness's, unchanged
        "/var/log": Stamp("dir", 0, 2, 6),  # a directory is written through its files
        "/var/log/archive.tar.gz": Stamp("file", 99, 3, 7),
        "/etc/motd": Stamp("removed", 0, 3, 8),
        "/root/.cache/link": Stamp("link", 4, 3, 9),
    }
    assert changed(before, after) == {
        "/etc/motd": "removed",
        "/root/.cache/link": "wrote",
        "/var/log/archive.tar.gz": "wrote",
    }
    assert changed(after, {**after, "/etc/passwd": Stamp("file", 12, 4, 5)}) == {"/etc/passwd": "wrote"}


def test_what_runs_on_the_host_writes_only_its_own_root_and_the_units_directory(tmp_path: Path) -> None:
    unit = tmp_path / "u0"
    unit.mkdir()
    marker = f"/var/tmp/boundary-own-root-{tmp_path.name}"
    with NamespaceHost(unit / "host").start() as host:
        before = host.written()
        script = f"mkdir -p {marker} && echo kept > {marker}/log && echo through > {unit}/through && rm -f /etc/motd"
        assert host.run(["bash", "-c", script]).returncode == 0
        wrote = changed(before, host.written())
        assert (host.root() / marker.lstrip("/") / "log").read_text() == "kept\n"
        assert not Path(marker).exists()  # never on this machine
    assert wrote[f"{marker}/log"] == "wrote"
    assert (unit / "through").read_text() == "through\n"  # the unit's directory is this machine's
    assert not [path for path in wrote if path.startswith(str(unit))]
    assert wrote.get("/etc/motd", "removed") == "removed"  # a whiteout where the machine has one
    assert not Path(marker).exists()
