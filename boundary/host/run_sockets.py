"""Every socket under /run: owner, mode, POSIX ACL, and which users can still connect to it.

Incident 3 chmod'ed root-owned sockets to `mode & 0o700`; the later fix denied one user through an
ACL entry and left the mode alone. So a snapshot reads the ACL xattr too, and works out from mode,
ACL and the parent directories who can connect (write on the socket, search on every directory
above it) — a change that takes a socket from any user is named, whichever way it was made.
"""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass
from typing import Any

ACL_XATTR = "system.posix_acl_access"
# Tags of a POSIX ACL entry (linux/posix_acl.h); entries follow a 4-byte version header.
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
WRITE, SEARCH = 0o2, 0o1
NOTABLE = ("nobody", "messagebus", "systemd-resolve", "systemd-network", "systemd-timesync")  # the bus's usual peers


@dataclass(frozen=True)
class Identity:
    name: str
    uid: int
    gids: frozenset[int]


@dataclass(frozen=True)
class Node:
    """The permission-relevant state of one file or directory."""

    mode: int
    uid: int
    gid: int
    acl: bytes | None

    @classmethod
    def of(cls, path: str) -> Node:
        info = os.lstat(path)
        try:
            acl: bytes | None = os.getxattr(path, ACL_XATTR, follow_symlinks=False)
        except OSError:
            acl = None
        return cls(stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, acl)


def acl_entries(acl: bytes) -> list[tuple[int, int, int]]:
    """(tag, perm, id) of each entry of a `system.posix_acl_access` value."""
    return [struct.unpack_from("<HHI", acl, offset) for offset in range(4, len(acl) - 7, 8)]


def permits(node: Node, who: Identity, want: int) -> bool:
    """POSIX access check (acl(5), 'access check algorithm') for the bits in `want`."""
    if who.uid == 0:
        return True  # CAP_DAC_OVERRIDE: why root still reached a 0700 bus
    if node.uid == who.uid:
        return (node.mode >> 6) & want == want
    if node.acl is None:
        bits = node.mode >> 3 if node.gid in who.gids else node.mode
        return bits & want == want
    entries = acl_entries(node.acl)
    mask = next((perm for tag, perm, _ in entries if tag == MASK), 0o7)
    named = [perm for tag, perm, uid in entries if tag == USER and uid == who.uid]
    if named:
        return named[0] & mask & want == want
    groups = [
        perm
        for tag, perm, gid in entries
        if (tag == GROUP_OBJ and node.gid in who.gids) or (tag == GROUP and gid in who.gids)
    ]
    if groups:
        return any(perm & mask & want == want for perm in groups)
    return node.mode & want == want


def identities(passwd: str = "/etc/passwd", group: str = "/etc/group") -> list[Identity]:
    """Every user of the host with its primary and supplementary groups."""
    members: dict[str, set[int]] = {}
    with open(group) as groups:
        for line in groups:
            fields = line.rstrip("\n").split(":")
            for user in fields[3].split(",") if len(fields) > 3 and fields[3] else []:
                members.setdefault(user, set()).add(int(fields[2]))
    with open(passwd) as users:
        rows = [line.split(":") for line in users if line.count(":") >= 6]
    return [Identity(r[0], int(r[2]), frozenset({int(r[3]), *members.get(r[0], set())})) for r in rows]


def run_sockets(root: str = "/run", users: list[Identity] | None = None) -> dict[str, dict[str, Any]]:
    """Every socket under `root`, walked without following links, with who can connect to it."""
    users = identities() if users is None else users
    sockets = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISSOCK(info.st_mode):
                sockets[path] = _socket_state(path, info, users)
    return sockets


def _socket_state(path: str, info: os.stat_result, users: list[Identity]) -> dict[str, Any]:
    node = Node.of(path)
    parents = [Node.of(directory) for directory in _ancestors(path)]
    reach = [
        who.name
        for who in users
        if permits(node, who, WRITE) and all(permits(parent, who, SEARCH) for parent in parents)
    ]
    return {
        "dev": info.st_dev,
        "ino": info.st_ino,
        "mode": f"{node.mode:04o}",
        "uid": node.uid,
        "gid": node.gid,
        "acl": None if node.acl is None else node.acl.hex(),
        "reach": sorted(reach),
    }


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")[1:-1]
    return ["/", *("/" + "/".join(parts[: i + 1]) for i in range(len(parts)))]


def acl_text(acl_hex: str | None) -> str:
    """An ACL as getfacl would abbreviate it (u::rw-,u:65534:---,…); 'none' without one."""
    if acl_hex is None:
        return "none"
    names = {USER_OBJ: "u:", USER: "u:", GROUP_OBJ: "g:", GROUP: "g:", MASK: "m:", OTHER: "o:"}
    parts = []
    for tag, perm, ident in acl_entries(bytes.fromhex(acl_hex)):
        qualifier = str(ident) if tag in (USER, GROUP) else ""
        bits = "".join(letter if perm & bit else "-" for letter, bit in (("r", 4), ("w", 2), ("x", 1)))
        parts.append(f"{names.get(tag, '?:')}{qualifier}:{bits}")
    return ",".join(parts)


def socket_diff(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> str:
    """Every socket whose mode, owner, ACL or reach changed, or that vanished or appeared."""
    known = {name for state in before.values() for name in state.get("reach", [])}  # users the host had
    changes = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old is None or new is None:
            changes.append(f"{path} {'appeared' if old is None else 'vanished'}")
        else:  # not the inode: a service restart recreates its sockets; a chmod or an ACL keeps it
            changed = [f"{key} {old[key]}→{new[key]}" for key in ("mode", "uid", "gid") if old[key] != new[key]]
            changed += [f"acl {acl_text(old['acl'])}→{acl_text(new['acl'])}"] if old["acl"] != new["acl"] else []
            changed += _reach_change(old.get("reach", []), new.get("reach", []), known)
            changes += [f"{path}: {', '.join(changed)}"] if changed else []
    return "; ".join(changes)


def _reach_change(before: list[str], after: list[str], known: set[str], shown: int = 5) -> list[str]:
    lost, gained = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    if "nobody" in after:  # a user new to the host (a runner's job user) reaching what any user reaches gained nothing
        gained = [name for name in gained if name in known]
    changes = []
    if len(lost) > shown and set(after) <= {"root"}:
        changes.append(f"root only now ({len(lost)} users lost it: {_some(lost, shown)})")
    elif lost:
        changes.append(f"no longer reachable by {_some(lost, shown)}")
    if gained:
        changes.append(f"now reachable by {_some(gained, shown)}")
    return changes


def _some(names: list[str], shown: int) -> str:
    """A few names first (the ones a reader looks for), then how many more."""
    first = sorted(names, key=lambda name: (name not in NOTABLE, name))[:shown]
    return ", ".join(first) + (f" and {len(names) - shown} more" if len(names) > shown else "")
