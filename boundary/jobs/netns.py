"""Run a command in its own network namespace with only loopback.

The scripted model is bridged in: socat listens on 127.0.0.1:PORT inside
the namespace and forwards to the model server's Unix socket. A PID
namespace makes sure nothing the job started outlives it.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from boundary import proc
from boundary.host import variant
from boundary.results.network import BRIDGE_PORT

_INNER = """set -e
cd -- "$1"; shift  # entering a host's mount namespace resets the working directory to its root
{loopback}socat TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{socket} </dev/null >/dev/null 2>&1 &
# wait until the bridge listens, so the agent's first request cannot race it
for i in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break
  sleep 0.02
done
{hide}exec "$@"
"""
# The harness's own records (transcripts, traces of other jobs) vanish under an empty tmpfs in the job's
# mount namespace: a job that finds them found the harness, not a leak of the runner. The trace file is
# opened first, as fd 9, so strace still writes it.
_HIDE = """exec 9>>{trace}
mount -t tmpfs -o ro,size=64k,mode=0700 boundary-hidden {records}
"""


class NetnsError(RuntimeError):
    pass


def loopback() -> str:
    """What brings a job's network namespace up: its loopback, with IPv6 off where the host has it off."""
    return "ip link set lo up\n" + (f"{variant.IPV6_OFF}\n" if variant.ipv6_off() else "")


def model_url(job: str) -> str:
    return f"http://127.0.0.1:{BRIDGE_PORT}/jobs/{job}/v1"


# Every call that can reach a peer or send to one (sendmmsg: a resolver's queries; write, writev, pwritev2, sendfile,
# splice: a datagram on a connected socket, as bash's /dev/udp or `nc -u` send it; pwrite64 and pwritev cannot, a
# socket has no offset: ESPIPE), and execve: a destination is named with the program that reached for it. `-yy`
# names the socket each call acts on (TCP, UDP…, its peer), which nettrace.py needs to tell a datagram from a write
# to a file. A write costs a ptrace stop (about 40 µs here): 20,000 writes took 0.90 s instead of 0.14 s, a real
# opencode job made about 320 and took no measurably longer (its 7-10 s vary more).
# `-s 0`: no byte a job wrote is copied into the trace (a job of a pod can read another's strace's open files);
# sendmsg and sendmmsg unabridged: strace shows the first 32 messages of a vector, and each may name its own address.
# An io_uring, or Linux AIO's io_submit, sends with no send to trace: every io_uring_setup and io_setup fails (Node's
# libuv sets a ring up at start, srt's
# too, and falls back to plain calls), and nettrace.py calls a trace with a ring set up anyway INCONCLUSIVE.
STRACE = (
    *("strace", "-f", "-yy", "--seccomp-bpf", "-qq", "-s", "0", "-e", "abbrev=!sendmsg,sendmmsg"),
    *(
        "-e",
        "trace=connect,sendto,sendmsg,sendmmsg,write,writev,pwritev2,sendfile,splice,io_uring_setup,io_setup,execve",
    ),
    *("-e", "inject=io_uring_setup,io_setup:error=ENOSYS", "-e", "signal=none"),
)


def wrap(
    argv: list[str], cwd: Path, model_socket: Path, trace: Path | None = None, enter: tuple[str, ...] = ()
) -> list[str]:
    """argv run as PID 1 of fresh net + pid namespaces, with the model bridged to loopback.

    With `trace`, strace records every connect/send of the job's whole process tree there, and the
    directory holding the trace (the harness's records) is hidden from the job.
    `enter` runs it all inside a disposable host (an nsenter prefix).
    """
    if trace is not None:
        # strace becomes PID 1 and waits for every tracee: end the stragglers when the job ends.
        reaper = ["bash", "-c", 'exec 9>&-; "$@"; rc=$?; kill -KILL -1 2>/dev/null; exit $rc', "traced-job"]
        argv = [*STRACE, "-o", "/dev/fd/9", "--", *reaper, *argv]
    missing = [tool for tool in ("setpriv", "unshare", "ip", "socat", "bash", "strace") if shutil.which(tool) is None]
    if missing:
        raise NetnsError(f"jobs need {', '.join(missing)} on PATH (apt-get install util-linux iproute2 socat strace)")
    if os.geteuid() != 0:
        namespaces = ["--user", "--map-root-user", "--net", "--pid", "--fork", "--mount", "--mount-proc"]
    else:
        namespaces = ["--net", "--pid", "--fork", "--mount", "--mount-proc"]
    hide = _HIDE.format(trace=shlex.quote(str(trace)), records=shlex.quote(str(trace.parent))) if trace else ""
    inner = _INNER.format(port=BRIDGE_PORT, socket=model_socket, hide=hide, loopback=loopback())
    wrapped = ["unshare", *namespaces, "--kill-child", "--", "bash", "-c", inner, "boundary-job", str(cwd), *argv]
    return [*proc.DIES_WITH_US, *enter, *wrapped]
