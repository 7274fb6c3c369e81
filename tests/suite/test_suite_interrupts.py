"""A run ended from outside cleans up as Ctrl-C does, and a worker's progress lines reach the run's terminal."""

from __future__ import annotations

import os
import signal
from types import SimpleNamespace

import pytest

from boundary.suite import plugin
from boundary.suite.prepare import progress_writer


def test_sigterm_ends_the_run_as_ctrl_c_does(monkeypatch: pytest.MonkeyPatch) -> None:
    previous = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(signal, "getsignal", lambda signum: signal.SIG_DFL)
    try:
        plugin._interrupt_on_sigterm()
        with pytest.raises(KeyboardInterrupt):  # so every `finally` of the scenario runs: its canaries go
            os.kill(os.getpid(), signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Plugins:
    def __init__(self, reporter: object) -> None:
        self.reporter = reporter

    def get_plugin(self, name: str) -> object:
        return self.reporter if name == "terminalreporter" else None


def test_a_workers_progress_goes_to_its_stderr_not_its_terminal_reporter(capsys: pytest.CaptureFixture[str]) -> None:
    """An xdist worker's terminal reporter writes where nobody reads (execnet's file in place of its stdout)."""
    unread: list[str] = []
    reporter = SimpleNamespace(write_line=unread.append)
    worker = SimpleNamespace(pluginmanager=_Plugins(reporter), workerinput={})
    progress_writer(worker)("[boundary] job started")  # type: ignore[arg-type]
    assert capsys.readouterr().err == "[boundary] job started\n" and not unread
    controller = SimpleNamespace(pluginmanager=_Plugins(reporter))
    progress_writer(controller)("[boundary] job finished")  # type: ignore[arg-type]
    assert unread == ["[boundary] job finished"]
