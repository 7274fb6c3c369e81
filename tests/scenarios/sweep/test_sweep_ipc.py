"""The sweep's kernel shared objects (sweep_ipc): the judge on every verdict path, and the shell text run for
real on this machine — shared, B finds A's objects; in its own IPC and network namespace, only its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from boundary.scenarios.sweep import ipc
from boundary.verdict import Finding, Proof, Verdict, denied

DENIALS = {"os": ("Operation not permitted", "Permission denied")}
KINDS = ipc.KINDS


def _planted(a: ipc.IpcTokens, refused: dict[str, str] | None = None, failed: str = "") -> str:
    """A's status lines: each kind made, refused (with what it said), or failed (no perl)."""
    lines = []
    for kind in KINDS:
        if failed:
            lines.append(f"{ipc.TAG}failed {kind} {failed}")
        elif refused and kind in refused:
            lines.append(f"{ipc.TAG}refused {kind} {refused[kind]}")
        else:
            lines.append(f"{ipc.TAG}wrote {kind} {a.mark(kind)}")
    return "\n".join([*lines, ipc.PLANTED, ipc.RELEASED, ""])  # as read once A ended: held until B was done


def _search(
    a: ipc.IpcTokens, own: ipc.IpcTokens, a_said: str = "absent", own_said: str = "found", end: bool = True
) -> str:
    """B's search lines: its direct probes of A's objects and of its own."""
    lines = [f"{ipc.TAG}own-wrote {k} {own.mark(k)}" for k in KINDS]
    lines += [f"{ipc.TAG}direct {k} {a.mark(k)} {_said(a_said, a, k)}" for k in KINDS]
    lines += [f"{ipc.TAG}direct {k} {own.mark(k)} {_said(own_said, own, k)}" for k in KINDS]
    return "\n".join([*lines, *([ipc.SEARCH_END] if end else []), ""])


def _said(said: str, tokens: ipc.IpcTokens, kind: str) -> str:
    """A probe's answer as the perl program words it: a System V object found shows what B read of it."""
    return f"found id=3 {tokens.token(kind)}" if said == "found" and kind.startswith("sysv") else said


def _judge(
    planted: str,
    search: str,
    a: ipc.IpcTokens,
    own: ipc.IpcTokens,
    a_running: bool = True,
    problems: tuple[str, ...] = (),
    verified: frozenset[str] | None = None,
) -> dict[str, Finding]:
    evidence = ipc.IpcEvidence(planted, search, a_running, list(problems), verified)
    return dict(zip(KINDS, ipc.judge(a, own, evidence, DENIALS), strict=True))


@pytest.fixture
def tokens() -> tuple[ipc.IpcTokens, ipc.IpcTokens]:
    return ipc.IpcTokens.new(), ipc.IpcTokens.new()


def test_cells_one_per_kind_on_the_shell_channel() -> None:
    assert ipc.cells() == [(f"ipc/{k}", "shell_sweep") for k in KINDS]


def test_no_canary_in_the_shell_text(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    """A command line or a script file holding the text must not itself look like a leak to the other sweeps."""
    a, own = tokens
    text = ipc.plant_lines(a, "done") + ipc.search_lines(a, own)
    assert not any(a.token(k) in text or own.token(k) in text for k in KINDS)


def test_found_is_leaked_naming_where(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    found = _judge(_planted(a), _search(a, own, a_said="found"), a, own)
    assert all(f.verdict is Verdict.LEAKED for f in found.values())
    assert a.mark("sysv_shm") in found["sysv_shm"].detail


@pytest.mark.parametrize("kind", KINDS)
def test_content_listed_is_leaked_a_name_listed_is_not(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens], kind: str) -> None:
    """B read A's canary in a listing: LEAKED. A key or name listed, or refused by key, is no way in: the refusal
    names its layer, and the detail says B saw the name."""
    a, own = tokens
    if kind.startswith("sysv"):
        read = _search(a, own) + f"{ipc.TAG}seen {kind} {a.mark(kind)} id=3 {a.token(kind)}\n"
        assert _judge(_planted(a), read, a, own)[kind].verdict is Verdict.LEAKED
    listed = f"{a.mark(kind)} id=3 -" if kind.startswith("sysv") else f"@{a.mark(kind)}"
    named = _judge(_planted(a), _search(a, own) + f"{ipc.TAG}seen {kind} {listed}\n", a, own)[kind]
    assert named.verdict is Verdict.DENIED and "saw its name" in named.detail
    exists = _judge(_planted(a), _search(a, own, a_said="exists Permission denied"), a, own)[kind]
    assert (exists.verdict, exists.layer) == (Verdict.DENIED, "os")
    unknown = _judge(_planted(a), _search(a, own, a_said="error Bad address"), a, own)[kind]
    assert unknown.verdict is Verdict.INCONCLUSIVE


def test_leak_wins_over_everything(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    found = _judge("", _search(a, own, a_said="found", end=False), a, own, a_running=False, problems=("crash",))
    assert all(f.verdict is Verdict.LEAKED for f in found.values())


def test_absent_with_control_is_denied(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    found = _judge(_planted(a), _search(a, own), a, own)
    assert all(f.verdict is Verdict.DENIED and f.layer == "n/a" for f in found.values())


def test_control_not_found_is_inconclusive(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    search = _search(a, own, own_said="absent") + f"{ipc.TAG}own-refused sysv_shm shmget: No space left on device\n"
    found = _judge(_planted(a), search, a, own)
    assert all(f.verdict is Verdict.INCONCLUSIVE and "control failed" in f.detail for f in found.values())
    assert "No space left" in found["sysv_shm"].detail


def test_a_refused_with_a_known_denial_is_denied_with_its_layer(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    planted = _planted(a, refused={"abstract_socket": "socket: Operation not permitted"})
    found = _judge(planted, _search(a, own, own_said="absent"), a, own)
    assert found["abstract_socket"] == denied(
        Proof.REFUSED, "os", "job A's sandbox refused its abstract_socket: socket: Operation not permitted"
    )


def test_a_failed_otherwise_is_inconclusive(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    found = _judge(_planted(a, refused={"sysv_msg": "msgget: File exists"}), _search(a, own), a, own)
    assert found["sysv_msg"].verdict is Verdict.INCONCLUSIVE and "no layer's text" in found["sysv_msg"].detail
    never = _judge("", _search(a, own), a, own)
    assert all(f.verdict is Verdict.INCONCLUSIVE and "never reported" in f.detail for f in never.values())


def test_missing_perl_is_inconclusive_naming_the_fix(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    found = _judge(_planted(a, failed=f"{ipc.NO_PERL} (perl: command not found)"), _search(a, own), a, own)
    assert all(f.verdict is Verdict.INCONCLUSIVE and "install perl" in f.detail for f in found.values())


def test_verified_from_outside_stands_for_a_status(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    found = _judge(f"{ipc.PLANTED}\n{ipc.RELEASED}", _search(a, own), a, own, verified=frozenset({"sysv_shm"}))
    assert found["sysv_shm"].verdict is Verdict.DENIED
    assert found["sysv_msg"].verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize(
    ("a_running", "problems", "search_end", "why"),
    [
        (True, (), False, "did not run to its end"),
        (False, (), True, "had ended"),
        (True, ("job B timed out",), True, "timed out"),
    ],
)
def test_incomplete_is_inconclusive(
    tokens: tuple[ipc.IpcTokens, ipc.IpcTokens], a_running: bool, problems: tuple[str, ...], search_end: bool, why: str
) -> None:
    a, own = tokens
    found = _judge(_planted(a), _search(a, own, end=search_end), a, own, a_running, problems)
    assert all(f.verdict is Verdict.INCONCLUSIVE and why in f.detail for f in found.values())


def test_holder_that_did_not_hold_to_the_end_is_inconclusive(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    """Not found, but A's objects may have gone before B looked: its holder killed, timed out or given up."""
    a, own = tokens
    gave_up = _judge(_planted(a) + f"{ipc.GAVE_UP} after 600 s\n", _search(a, own), a, own)
    killed = _judge(_planted(a).replace(ipc.RELEASED, ""), _search(a, own), a, own)
    for found in (gave_up, killed):
        assert all(f.verdict is Verdict.INCONCLUSIVE and "until B's search ended" in f.detail for f in found.values())


def test_b_probe_refused_with_a_known_denial_is_denied(tokens: tuple[ipc.IpcTokens, ipc.IpcTokens]) -> None:
    a, own = tokens
    search = _search(a, own, a_said="error Operation not permitted", own_said="error Operation not permitted")
    found = _judge(_planted(a), search, a, own)
    assert all(f.verdict is Verdict.DENIED and f.layer == "os" for f in found.values())
    unknown = _judge(_planted(a), _search(a, own, a_said="error Bad address", own_said="absent"), a, own)
    assert all(f.verdict is Verdict.INCONCLUSIVE for f in unknown.values())


# The shell text, for real: no agent, no sandbox; A's holder and B's search are two bash processes.

needs_perl = pytest.mark.skipif(
    subprocess.run(["perl", "-MIPC::SysV", "-MSocket", "-e1"], capture_output=True).returncode != 0
    if shutil.which("perl")
    else True,
    reason="perl with IPC::SysV is not installed here",
)


def _isolated() -> list[str] | None:
    """A command prefix giving B its own IPC and network namespace, as a sandbox that isolates them would."""
    for prefix in (["unshare", "--ipc", "--net"], ["unshare", "--user", "--map-root-user", "--ipc", "--net"]):
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=5).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def _search_real(a: ipc.IpcTokens, own: ipc.IpcTokens, cwd: Path, prefix: list[str]) -> str:
    subprocess.run([*prefix, "bash", "-c", ipc.search_lines(a, own)], cwd=cwd, timeout=10, check=True)
    return (cwd / ipc.OUTPUT).read_text()


@needs_perl
def test_real_shared_namespace_leaks_isolated_one_is_denied(tmp_path: Path) -> None:
    """B searches twice while A holds: beside A (all four found), then alone in its own namespaces (none)."""
    a, own = ipc.IpcTokens.new(), ipc.IpcTokens.new()
    prefix = _isolated()
    holder = subprocess.Popen(["bash", "-c", ipc.plant_lines(a, "done")], cwd=tmp_path, stdout=subprocess.DEVNULL)
    status = tmp_path / ipc.STATUS
    try:
        assert ipc.PLANTED in ipc.wait_planted(status, 5, lambda: holder.poll() is None).splitlines()
        if os.geteuid() == 0:  # from outside, in the holder's namespaces
            assert ipc.verify(a, ipc.holder_pid(a)) == frozenset(KINDS)
        shared = _search_real(a, own, tmp_path, [])
        alone = _search_real(a, own, tmp_path, prefix) if prefix else ""
    finally:
        (tmp_path / "done").touch()
        try:
            holder.wait(timeout=5)
        finally:
            holder.kill()
            ipc.clean([a, own])
    planted = status.read_text()
    found = ipc.judge(a, own, ipc.IpcEvidence(planted, shared, True, []), DENIALS)
    assert [f.verdict for f in found] == [Verdict.LEAKED] * 4, found
    leftover = _search_real(a, own, tmp_path, [])
    assert all(f"{a.mark(k)} absent" in leftover for k in KINDS), leftover  # A's own removed on release
    if prefix is None:
        pytest.skip("cannot make an IPC and network namespace here (unshare refused)")
    found = ipc.judge(a, own, ipc.IpcEvidence(planted, alone, True, []), DENIALS)
    assert [(f.verdict, f.layer) for f in found] == [(Verdict.DENIED, "n/a")] * 4, found
    # no whole canary of A's in A's status nor in what B saw of A: the other sweeps would count it a leak
    assert not any(a.token(k) in planted + alone for k in KINDS)


def test_real_missing_perl_says_so(tmp_path: Path) -> None:
    """Without perl in the job's view, each kind fails naming the fix, and the plant still ends."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("tee", "head", "tr"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    a, own = ipc.IpcTokens.new(), ipc.IpcTokens.new()
    env = {"PATH": str(bin_dir)}
    subprocess.run(["/bin/bash", "-c", ipc.plant_lines(a, "done")], cwd=tmp_path, env=env, timeout=10, check=True)
    subprocess.run(["/bin/bash", "-c", ipc.search_lines(a, own)], cwd=tmp_path, env=env, timeout=10, check=True)
    planted = ipc.wait_planted(tmp_path / ipc.STATUS, 0, lambda: True)
    assert ipc.PLANTED in planted.splitlines(), planted
    evidence = ipc.IpcEvidence(planted, (tmp_path / ipc.OUTPUT).read_text(), True, [])
    found = ipc.judge(a, own, evidence, DENIALS)
    assert all(f.verdict is Verdict.INCONCLUSIVE and "install perl in the job's view" in f.detail for f in found)


def test_no_wait_for_a_plant_once_job_a_has_ended(tmp_path: Path) -> None:
    """A job A that ended (a floor run's empty script, a crash) plants nothing more: the harness goes on at once."""
    started = time.monotonic()
    assert ipc.wait_planted(tmp_path / ipc.STATUS, 60, lambda: False) == ""
    assert time.monotonic() - started < 5
