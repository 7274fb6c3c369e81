"""The namespace host's own `/`: an overlay over this machine's, so whatever runs there writes only its upper layers.

A runner's verbs and its jobs run on this root. Every file they write outside the directories the harness passes
through (the unit's work directory, where `STATE` lives; boundary's cache of pinned tools and images) lands in an
upper layer on a tmpfs: the harness lists exactly what was written (not a guess from a walk), and nothing of it
reaches the real host; it goes with the host's mount namespace.

Each file system mounted below `/` gets an overlay of its own (an overlay shows one file system, not what is
mounted on it); the kernel's (proc, sysfs, cgroups, …) are bound as they are; a mount of a single file (a
container's /etc/hosts) is copied in. PID 1 keeps the layers' tmpfs open on a file descriptor, so the harness
reaches them through /proc after the old root is gone, while no path inside the host leads there.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from boundary.host.base import HostError, Stamp

LAYERS_FD = 7  # PID 1's descriptor on the layers' tmpfs
LAYERS_INDEX = "layers.tsv"  # in the host's work directory: `layer<TAB>mount point`, one line per overlay
ROOT_LAYER = "root"
# Replaced or bound whole by the init script: its own /run and /proc, the machine's /sys and /dev.
OWN_TREES = ("/proc", "/sys", "/dev", "/run")
KERNEL_FILESYSTEMS = frozenset(
    {
        *("proc", "sysfs", "cgroup", "cgroup2", "devpts", "devtmpfs", "mqueue", "nsfs", "bpf", "tracefs"),
        *("debugfs", "securityfs", "pstore", "configfs", "fusectl", "hugetlbfs", "binfmt_misc", "autofs"),
        *("efivarfs", "selinuxfs", "rpc_pipefs"),
    }
)
# Characters an overlay's `lowerdir=` option cannot take unescaped; such a mount is bound read-only instead.
OPTION_UNSAFE = re.compile(r"[,:\\]")

# Runs in PID 1 before anything else is mounted; $W/mounts is `mount_plan`'s, $NSHOST_THROUGH the unit's directory.
OWN_ROOT_SCRIPT = r"""
R=$W/root L=$W/layers
mkdir -p "$R" "$L"
mount -n -t tmpfs -o mode=0700 nslayers "$L"
mkdir -p "$L/root/upper" "$L/root/work"
# `volatile`: unmounting would otherwise sync the whole upper layer, uninterruptibly, past stop()'s grace.
mount -n -t overlay -o "lowerdir=/,upperdir=$L/root/upper,workdir=$L/root/work,volatile" nsroot "$R"
# Failing that, the path shows its parent's directory, in the root's overlay: still nothing reaches the real one.
read_only() {
  { mount -n --bind "$1" "$R$1" && mount -n -o remount,bind,ro "$R$1"; } 2>> "$W/mounts.log" ||
    echo "not bound: $1" >> "$W/mounts.log"
}
: > "$W/layers.tsv"
i=0
while IFS=$'\t' read -r kind mp; do
  # A mount gone since the plan was made (a container stopped) leaves its parent's directory there: no harm.
  [[ -e $mp && -e $R$mp ]] || { echo "gone: $mp" >> "$W/mounts.log"; continue; }
  case $kind in
    overlay)
      i=$((i + 1)); mkdir -p "$L/$i/upper" "$L/$i/work"
      opts="lowerdir=$mp,upperdir=$L/$i/upper,workdir=$L/$i/work,volatile"
      if mount -n -t overlay -o "$opts" "nsmount$i" "$R$mp" 2>> "$W/mounts.log"; then
        printf '%s\t%s\n' "$i" "$mp" >> "$W/layers.tsv"
      else  # one overlayfs cannot stack on: read-only, so nothing is written to the real one
        read_only "$mp"
      fi;;
    readonly) read_only "$mp";;
    bind) mount -n --bind "$mp" "$R$mp" 2>> "$W/mounts.log" || echo "not bound: $mp" >> "$W/mounts.log";;
    file) cp -a --remove-destination "$mp" "$R$mp" 2>> "$W/mounts.log" || echo "not copied: $mp" >> "$W/mounts.log";;
  esac
done < "$W/mounts"
mount -n -t proc proc "$R/proc"
mount -n --rbind /sys "$R/sys"
mount -n --rbind /dev "$R/dev"
mount -n -t tmpfs -o mode=1777,nosuid,nodev nsshm "$R/dev/shm"
# Not --rbind: the root and its layers are mounted under it, and would show inside a second time.
mount -n --bind "$NSHOST_THROUGH" "$R$NSHOST_THROUGH"
# boundary's cache (the pinned tools, an example's image store): its own, as built before the run. A container
# store's overlay driver refuses a graph root on overlayfs.
if [[ -d $NSHOST_CACHE ]]; then mount -n --bind "$NSHOST_CACHE" "$R$NSHOST_CACHE"; fi
exec 7<"$L"
cd "$R"
pivot_root . .
umount -n -l .
cd /
"""


@dataclass(frozen=True)
class Mount:
    point: str
    filesystem: str


def mounts(mountinfo: str) -> list[Mount]:
    """Each mount point once (the topmost mount there), in the order they were mounted."""
    found: dict[str, Mount] = {}
    for line in mountinfo.splitlines():
        fields = line.split()
        if "-" not in fields:
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4])
        found.pop(point, None)
        found[point] = Mount(point, fields[fields.index("-") + 1])
    return list(found.values())


def mount_plan(mountinfo: str, *through: Path) -> str:
    """What the init script does with each mount below `/`: `kind<TAB>point` lines, parents first; nothing under
    the directories bound `through` as they are."""
    lines = []
    for mount in sorted(mounts(mountinfo), key=lambda m: m.point.count("/")):
        point = mount.point
        if point == "/" or _under(point, (*OWN_TREES, *map(str, through))):
            continue
        if "\t" in point or "\n" in point:
            raise HostError(f"expected mount points without tabs or newlines; saw {point!r}. Fix: unmount it")
        lines.append(f"{_kind(mount)}\t{point}")
    return "".join(f"{line}\n" for line in lines)


def _kind(mount: Mount) -> str:
    if mount.filesystem in KERNEL_FILESYSTEMS:
        return "bind"
    if not os.path.isdir(mount.point):
        return "file"
    return "readonly" if OPTION_UNSAFE.search(mount.point) else "overlay"


def _under(path: str, trees: tuple[str, ...]) -> bool:
    return any(path == tree or path.startswith(tree.rstrip("/") + "/") for tree in trees)


# -- what was written ----------------------------------------------------------------------------------------


def layers(pid: int, workdir: Path) -> dict[str, Path]:
    """Mount point -> its upper layer, as the harness reaches it through PID 1's descriptor."""
    base = Path(f"/proc/{pid}/fd/{LAYERS_FD}")
    found = {"/": base / ROOT_LAYER / "upper"}
    index = workdir / LAYERS_INDEX
    for line in index.read_text().splitlines() if index.exists() else []:
        layer, _, point = line.partition("\t")
        found[point] = base / layer / "upper"
    return found


def written(pid: int, workdir: Path) -> dict[str, Stamp]:
    """Every path the host's upper layers hold, as the host sees it."""
    found: dict[str, Stamp] = {}
    for point, upper in layers(pid, workdir).items():
        for top, dirs, files in os.walk(upper):
            inside = Path(point) / Path(top).relative_to(upper)
            for name in (*dirs, *files):
                stamp = _stamp(Path(top) / name)
                if stamp is not None:
                    found[str(inside / name)] = stamp
    return found


def _stamp(path: Path) -> Stamp | None:
    try:
        info = path.lstat()
    except FileNotFoundError:  # removed while we walked
        return None
    if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
        kind = "removed"
    elif stat.S_ISLNK(info.st_mode):
        kind = "link"
    elif stat.S_ISDIR(info.st_mode):
        kind = "dir"
    else:
        kind = "file"
    return Stamp(kind, info.st_size, info.st_mtime_ns, info.st_ino)


def changed(before: dict[str, Stamp], after: dict[str, Stamp]) -> dict[str, str]:
    """Path -> how it changed between two listings ("wrote", "removed"); directories only when removed."""
    found = {}
    for path, stamp in after.items():
        if before.get(path) == stamp or stamp.kind == "dir":
            continue
        found[path] = "removed" if stamp.kind == "removed" else "wrote"
    return dict(sorted(found.items()))
