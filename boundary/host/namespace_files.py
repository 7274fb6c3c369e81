"""What the namespace host (boundary/host/namespace.py) is made of: the files it binds over /etc, and its PID 1.

Every file is written into the host's work directory and bound in its private mount namespace by the
init script, so nothing of this machine's /etc changes: the users it adds, its resolv.conf, its
resolved.conf and the D-Bus policy that lets systemd-resolved own its name.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from boundary.host.base import CANARY_NAME, DNSMASQ_CONF, RESOLVED_CONF, VETH_SCRIPT
from boundary.host.own_root import OWN_ROOT_SCRIPT, mount_plan
from boundary.host.variant import IPV6_OFF, etc_files, ipv6_off
from boundary.toolchain import tools

RESOLV_CONF = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n"

# No double hyphen may appear in an XML comment here: dbus-daemon refuses the whole file.
DBUS_SYSTEM_CONF = """\
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <user>messagebus</user>
  <fork/>
  <pidfile>/run/dbus/pid</pidfile>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/> <allow receive_type="method_return"/>
    <allow receive_type="error"/> <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
  </policy>
  <policy user="root"> <allow own="*"/> <allow send_type="method_call"/> </policy>
  <include>{resolved_root}/usr/share/dbus-1/system.d/org.freedesktop.resolve1.conf</include>
  <limit name="reply_timeout">5000</limit>
</busconfig>
"""


def _dnsmasq_conf(workdir: Path, run_as_dnsmasq: bool) -> str:
    lines = [DNSMASQ_CONF.rstrip("\n"), "pid-file=/run/dnsmasq/dnsmasq.pid", f"log-facility={workdir / 'dnsmasq.log'}"]
    if run_as_dnsmasq:  # without a dnsmasq user it stays root, which is fine inside the namespace
        lines += ["user=dnsmasq", "group=nogroup"]
    return "\n".join(lines) + "\n"


def _free_ids(passwd: str, group: str, count: int) -> list[int]:
    # An id unused as uid and as gid, so the new user and its group can share it.
    used = {int(line.split(":")[2]) for text in (passwd, group) for line in text.splitlines() if line.count(":") >= 3}
    free = [i for i in range(985, 100, -1) if i not in used]
    return free[:count]


def _with_users(passwd: str, group: str, names: list[str]) -> tuple[str, str]:
    """Add each name (if absent) as a system user with its own group."""
    missing = [n for n in names if not any(line.startswith(f"{n}:") for line in passwd.splitlines())]
    for name, uid in zip(missing, _free_ids(passwd, group, len(missing)), strict=True):
        passwd = passwd.rstrip("\n") + f"\n{name}:x:{uid}:{uid}:{name}:/:/usr/sbin/nologin\n"
        if not any(line.startswith(f"{name}:") for line in group.splitlines()):
            group = group.rstrip("\n") + f"\n{name}:x:{uid}:\n"
    return passwd, group


# PID 1 inside the namespaces. Paths come through NSHOST_* variables, never spliced into the text.

INIT_SCRIPT = (
    r"""
set -euo pipefail
trap 'echo "nshost: failed at line $LINENO: $BASH_COMMAND" >&2' ERR
W=$NSHOST_WORKDIR

# Refuse to touch anything unless we really are PID 1 in fresh mount and network namespaces:
# every mount below would otherwise land on the real host.
[[ $$ == 1 ]] || { echo "nshost: refusing: not PID 1 (pid $$)" >&2; exit 90; }
[[ $(readlink /proc/self/ns/mnt) != "$NSHOST_PARENT_MNT" ]] || { echo "nshost: refusing: host mount ns" >&2; exit 91; }
[[ $(readlink /proc/self/ns/net) != "$NSHOST_PARENT_NET" ]] || { echo "nshost: refusing: host net ns" >&2; exit 92; }
trap 'kill -TERM -1 2>/dev/null; sleep 0.2; exit 0' TERM INT

mount -n --make-rprivate /
"""
    + OWN_ROOT_SCRIPT
    + r"""
mount -n -t tmpfs -o mode=0755,nosuid,nodev,size=16m nsrun /run
mkdir -p /run/dbus /run/dnsmasq /run/lock /run/systemd /run/nshost
if [[ -n $NSHOST_DNSMASQ_USER ]]; then chown "$NSHOST_DNSMASQ_USER:nogroup" /run/dnsmasq; fi
# The files `--host-etc` names (a distribution's stock hosts, say) over the host's own, in this host only: /etc is
# the own root's, so a runner's hook may add users here too.
if [[ -d $W/etc-own ]]; then cp -a --remove-destination "$W/etc-own/." /etc/; fi

rc=$(readlink -m /etc/resolv.conf)
if [[ ! -e $rc ]]; then
  # Only create a missing target on our private /run tmpfs, never on the host's /etc.
  [[ $rc == /run/* ]] || { echo "nshost: refusing: $rc missing outside /run" >&2; exit 93; }
  mkdir -p "$(dirname "$rc")"; touch "$rc"
fi
mount -n --bind "$W/resolv.conf" "$rc"
cat "$W/passwd" > /etc/passwd
cat "$W/group" > /etc/group
mount -n --bind "$NSHOST_SYSTEMD_SRC" "$NSHOST_SYSTEMD_DST"
mount -n --bind "$W/dbus-system.conf" /usr/share/dbus-1/system.conf

bash -c "$NSHOST_VETH"
eval "$NSHOST_IPV6_OFF"

dnsmasq --conf-file="$W/dnsmasq.conf"
dbus-daemon --system --fork
for _ in $(seq 200); do [[ -S /run/dbus/system_bus_socket ]] && break; sleep 0.02; done
SYSTEMD_LOG_TARGET=console setsid "$NSHOST_RESOLVED_ROOT/lib/systemd/systemd-resolved" \
  >> "$W/resolved.log" 2>&1 < /dev/null &

state=fail
for _ in $(seq 200); do
  if getent hosts "$NSHOST_CANARY" > /dev/null; then state=ok; break; fi
  sleep 0.02
done
echo "$state" > "$W/ready.partial"; mv "$W/ready.partial" "$W/ready"

# PID 1 must reap orphans (restarted resolved, nsenter'd commands) until told to stop.
while :; do sleep 3600 & wait $! || true; done
"""
)


def write_files(workdir: Path, resolved_root: Path) -> dict[str, str]:
    """Write every file the init script binds; return its environment (paths as variables, never spliced in)."""
    passwd, group = _with_users(
        Path("/etc/passwd").read_text(), Path("/etc/group").read_text(), ["systemd-resolve", "nsprobe"]
    )
    (workdir / "passwd").write_text(passwd)
    (workdir / "group").write_text(group)
    (workdir / "resolv.conf").write_text(RESOLV_CONF)
    (workdir / "dbus-system.conf").write_text(DBUS_SYSTEM_CONF.format(resolved_root=resolved_root))
    run_as_dnsmasq = any(line.startswith("dnsmasq:") for line in passwd.splitlines())
    (workdir / "dnsmasq.conf").write_text(_dnsmasq_conf(workdir, run_as_dnsmasq))
    (workdir / "init.sh").write_text(INIT_SCRIPT)
    cache = tools.cache_root().resolve()
    (workdir / "mounts").write_text(mount_plan(Path("/proc/self/mountinfo").read_text(), workdir.parent, cache))
    _own_etc_files(workdir / "etc-own", etc_files())
    src, dst = _systemd_conf(workdir)
    return {
        **os.environ,
        "NSHOST_WORKDIR": str(workdir),
        "NSHOST_THROUGH": str(workdir.parent),  # the unit's directory: its writes are the harness's to read
        "NSHOST_CACHE": str(cache),
        "NSHOST_RESOLVED_ROOT": str(resolved_root),
        "NSHOST_PARENT_MNT": os.readlink("/proc/self/ns/mnt"),
        "NSHOST_PARENT_NET": os.readlink("/proc/self/ns/net"),
        "NSHOST_SYSTEMD_SRC": str(src),
        "NSHOST_SYSTEMD_DST": str(dst),
        "NSHOST_DNSMASQ_USER": "dnsmasq" if run_as_dnsmasq else "",
        "NSHOST_CANARY": CANARY_NAME,
        "NSHOST_VETH": VETH_SCRIPT,
        "NSHOST_IPV6_OFF": IPV6_OFF if ipv6_off() else "",
    }


def _own_etc_files(directory: Path, files: dict[str, Path]) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    for name, file in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, directory / name)


def _systemd_conf(workdir: Path) -> tuple[Path, Path]:
    """Our resolved.conf and where to bind it: the single file when the host has one, else all of /etc/systemd."""
    host = Path("/etc/systemd/resolved.conf")
    if host.exists():
        (workdir / "resolved.conf").write_text(RESOLVED_CONF)
        return workdir / "resolved.conf", host
    # A bind over a missing file would have to create it on the host's /etc; bind a copy of the directory.
    copy = workdir / "systemd"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree("/etc/systemd", copy, symlinks=True)
    (copy / "resolved.conf").write_text(RESOLVED_CONF)
    return copy, Path("/etc/systemd")


def user_ids(passwd: str, name: str) -> tuple[int, int]:
    """(uid, gid) of a user in this passwd text."""
    uid, gid = next(line.split(":")[2:4] for line in passwd.splitlines() if line.startswith(f"{name}:"))
    return int(uid), int(gid)
