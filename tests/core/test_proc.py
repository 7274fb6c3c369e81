"""One process-run policy: output captured, the whole group ended on timeout, and hosts say so as HostError."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from boundary import layout, proc
from boundary.host import image
from boundary.host.base import HostError
from boundary.host.container import ContainerHost
from boundary.host.live import LiveHost
from boundary.host.namespace import NamespaceHost


def gone(pid: int, within_s: float = 2.0) -> bool:
    """The process has exited (a zombie waiting for its reaper counts as exited)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_run_captures_output_exit_code_and_input() -> None:
    done = proc.run(["sh", "-c", "cat; echo err >&2; exit 3"], timeout=10, what="a shell", input="in\n")
    assert (done.returncode, done.stdout, done.stderr) == (3, "in\n", "err\n")


def test_timeout_ends_the_whole_group_and_says_expected_seen_fix(tmp_path: Path) -> None:
    """A child that ignores SIGTERM is killed too; the error names what, the command, the timeout, the output."""
    script = f'(trap "" TERM; exec sleep 30) & echo $! > {tmp_path}/child; echo started; wait'
    with pytest.raises(proc.ProcTimeout) as raised:
        proc.run(["sh", "-c", script], timeout=0.5, what="a stuck shell")
    text = str(raised.value)
    assert "expected a stuck shell (`sh -c" in text and "within 0.5 s" in text
    assert "'started'" in text and "Fix:" in text
    assert gone(int((tmp_path / "child").read_text()))


def test_timeout_returns_even_when_an_escaped_child_holds_the_output(tmp_path: Path) -> None:
    script = f"setsid sleep 30 & echo $! > {tmp_path}/escaped; echo started; sleep 30"
    began = time.monotonic()
    try:
        with pytest.raises(proc.ProcTimeout, match="started"):
            proc.run(["sh", "-c", script], timeout=0.5, what="a shell whose child left its group")
        assert time.monotonic() - began < 0.5 + 2 * proc.GRACE_S + 1
    finally:
        os.kill(int((tmp_path / "escaped").read_text()), signal.SIGKILL)


def test_stop_group_leaves_a_finished_leaders_group_alone(tmp_path: Path) -> None:
    """What a job left running after it exited is a finding for the host checks, not ours to hide."""
    import subprocess

    script = f"sleep 30 & echo $! > {tmp_path}/left"
    leader = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    leader.wait(5)
    left = int((tmp_path / "left").read_text())
    try:
        proc.stop_group(leader)
        assert not gone(left, within_s=0.2)
    finally:
        os.kill(left, signal.SIGKILL)


@pytest.mark.parametrize(
    "host", [LiveHost(), NamespaceHost(Path("/nonexistent")), ContainerHost(Path("/x"), Path("/x"))]
)
def test_a_host_command_that_hangs_is_a_host_error(host: LiveHost, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host, "enter", list)  # run here, not inside: the policy is what is tested
    with pytest.raises(HostError, match=r"expected .*within 0.2 s.*Fix:"):
        host.run(["sleep", "5"], timeout=0.2)


def test_docker_that_hangs_is_a_host_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def hang(argv: list[str], **kwargs: object) -> None:
        raise proc.ProcTimeout("docker", argv, 60, "")

    monkeypatch.setattr(proc, "run", hang)
    with pytest.raises(HostError, match=r"docker.*within 60 s.*Fix:"):
        image._image_exists("boundary-host:x")


def test_git_that_hangs_is_a_timeout_not_a_hang(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def record(argv: list[str], **kwargs: object) -> object:
        seen.update(kwargs)
        raise proc.ProcTimeout("git", argv, 60, "")

    monkeypatch.setattr(proc, "run", record)
    with pytest.raises(proc.ProcTimeout):
        layout.git("status", cwd=tmp_path)
    assert seen["timeout"] == layout.GIT_TIMEOUT_S


def test_wait_until_returns_the_first_answer_and_none_at_the_deadline() -> None:
    answers = iter([None, None, "ready"])
    assert proc.wait_until(lambda: next(answers), timeout_s=5, interval_s=0) == "ready"
    assert proc.wait_until(lambda: None, timeout_s=0.05, interval_s=0.01) is None
