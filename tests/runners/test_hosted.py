"""A Python runner's verbs in a copy of it that a server holds (boundary.runners.hosted), entered here by `env`:
the same process a disposable host's `nsenter` prefix starts, on this machine."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import ClassVar

import pytest

from boundary.runners.fields import ProtocolError
from boundary.runners.hosted import HostedRunner, HostedRunnerError, _Server

HERE = ("env",)  # an enter prefix that runs the server on this machine


class Recorder:
    """A runner's verbs, reduced to what shows where they ran and what they kept between calls."""

    name = "recorder"
    denials: ClassVar[dict[str, tuple[str, ...]]] = {"OS sandbox": ("denied",)}

    def __init__(self, sandbox: str | None = None) -> None:
        self.sandbox_name = sandbox
        self.state: Path | None = None
        self.off: frozenset[str] = frozenset()

    def setup(self, state: Path, repository: Path, secret: str) -> None:
        print("the runner's own words, on its stdout")  # must not break the protocol
        self.state = state

    def account_db(self) -> Path | None:
        return self.state

    def credentials(self) -> list[Path]:
        return [(self.state or Path("/")) / str(os.getpid())]  # where the verb ran

    def expected_tools(self) -> frozenset[str]:
        return frozenset({"bash"}) - self.off

    def forbidden_tools(self) -> tuple[str, ...]:
        raise KeyError("no such tool list here")

    def turn_off(self, layers: frozenset[str]) -> None:
        self.off = layers

    def account_dir(self) -> Path | None:
        return Path("/srv/runner/account")  # outside STATE: the harness would read this machine's, not the host's

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def die(self) -> None:
        os._exit(3)


def hosted() -> HostedRunner:
    return HostedRunner(Recorder, {"sandbox": "none"})


def test_verbs_run_in_the_servers_copy_which_keeps_its_state_between_calls() -> None:
    runner = hosted()
    runner.run_verbs_in(HERE)
    try:
        runner.setup(Path("/state"), Path("/repo"), "secret")
        assert runner.account_db() == Path("/state")
        assert runner.credentials() != [Path(f"/state/{os.getpid()}")]  # another process ran it
        assert runner.inner.state is None  # the local copy describes; it ran no verb
        assert runner.name == "recorder" and runner.denials == Recorder.denials
    finally:
        runner.run_verbs_in(())
    assert runner.credentials() == [Path(f"/{os.getpid()}")]  # back in this process (a fresh copy)


def test_a_verbs_exception_comes_back_as_itself_with_where_it_was_raised() -> None:
    runner = hosted()
    runner.run_verbs_in(HERE)
    try:
        with pytest.raises(KeyError, match="no such tool list") as raised:
            runner.forbidden_tools()
        assert "inside the host its jobs run on" in "".join(raised.value.__notes__)
        assert runner.expected_tools() == {"bash"}  # the server goes on after a verb's error
    finally:
        runner.run_verbs_in(())


def test_layers_turned_off_before_and_after_the_host_are_off_in_the_copy() -> None:
    runner = hosted()
    runner.turn_off(frozenset({"bash"}))
    runner.run_verbs_in(HERE)
    try:
        assert runner.expected_tools() == frozenset()
    finally:
        runner.run_verbs_in(())


def test_a_copy_that_cannot_be_built_says_why_at_once() -> None:
    runner = HostedRunner(Recorder, {})
    runner._kwargs = {"no_such_argument": 1}  # as a factory that the host's copy of the module rejects
    with pytest.raises(TypeError, match="no_such_argument"):
        runner.run_verbs_in(HERE)


def test_a_verb_that_hangs_is_stopped_at_its_time_and_named() -> None:
    server = _Server.start(HERE, (Recorder, {}, frozenset()))
    began = time.monotonic()
    with pytest.raises(HostedRunnerError, match="expected an answer within 1 s"):
        server.call("sleep", (30,), timeout_s=1)
    assert time.monotonic() - began < 10
    assert server.process.poll() is not None
    with pytest.raises(HostedRunnerError, match="stopped after an earlier call"):
        server.call("expected_tools", (), timeout_s=1)


def test_a_place_outside_state_in_an_answer_is_refused_as_a_commands_would_be() -> None:
    runner = hosted()
    runner.run_verbs_in(HERE)
    try:
        runner.setup(Path("/state"), Path("/repo"), "secret")
        with pytest.raises(ProtocolError, match=r"'account_dir'.*inside the state directory /state, got /srv/runner"):
            runner.account_dir()
        assert runner.account_db() == Path("/state")
    finally:
        runner.run_verbs_in(())


def test_the_layers_turned_off_last_are_the_ones_a_new_copy_gets() -> None:
    runner = hosted()
    runner.turn_off(frozenset({"bash"}))
    runner.turn_off(frozenset())
    runner.run_verbs_in(HERE)
    try:
        assert runner.expected_tools() == {"bash"}
    finally:
        runner.run_verbs_in(())


def test_a_copy_that_dies_is_named_not_waited_for() -> None:
    server = _Server.start(HERE, (Recorder, {}, frozenset()))
    with pytest.raises(HostedRunnerError, match="exited 3"):
        server.call("die", (), timeout_s=30)
