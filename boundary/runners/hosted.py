"""An in-process runner (`--runner package.module:attr`) whose verbs run on the host its jobs run on.

A command runner's verbs run inside the disposable host (`VerbsOnHost`): what they write outside STATE is listed,
searched and thrown away with the host. A Python runner's would run in boundary's own process, on this machine, where
nothing of that holds. So, once the host is up, the runner is built a second time in a small server inside the host
(`python -m boundary.runners.hosted`, entered as a command runner's verbs are) and every verb is a call to it: its
arguments and answer pickled over the server's stdin and stdout, within the command protocol's time per verb. The
copy in this process answers only what describes the runner (its name, agent, sandbox, denials); it never runs a verb
while a host is entered.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from boundary.runners.command import TIMEOUT_S
from boundary.runners.contract import Job, Runner
from boundary.runners.fields import ProtocolError

_LENGTH = struct.Struct(">Q")
OTHER_CALL_S = 30.0  # a call that is no verb of the protocol (account_db, credentials, …)


class HostedRunnerError(Exception):
    """The server of a hosted runner could not be started, did not answer in time, or died. No RuntimeError: what
    catches a runner's own "not set up yet" must not take a dead copy for one."""


class HostedRunner:
    """A Python runner (built by `factory(**kwargs)`) that runs its verbs wherever `run_verbs_in` says."""

    def __init__(self, factory: Callable[..., Runner], kwargs: dict[str, Any]) -> None:
        self.inner = factory(**kwargs)
        self._factory, self._kwargs = factory, kwargs
        self._off: frozenset[str] = frozenset()
        self._server: _Server | None = None
        self._state: Path | None = None

    def __getattr__(self, name: str) -> Any:
        """What describes the runner (name, agent, sandbox, denials, network_watch, …): the local copy's."""
        if name.startswith("__") or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"HostedRunner({self.inner!r})"

    def run_verbs_in(self, enter: tuple[str, ...]) -> None:
        """From now on, every verb runs in a fresh copy of the runner inside `enter`'s host; `()`: in this process
        again (the host is going, and the copy there with it). The same host again keeps the copy it has."""
        if self._server is not None and self._server.enter == enter and self._server.process.poll() is None:
            return
        if self._server is not None:
            self._server.stop()
            self._server = None
        if enter:
            self._server = _Server.start(enter, (self._factory, self._kwargs, self._off))

    # -- the contract: each verb where the runner's jobs run ------------------------------------------------------
    def setup(self, state: Path, repository: Path, secret: str) -> None:
        self._state = state
        self._call("setup", state, repository, secret)

    def account_db(self) -> Path | None:
        database: Path | None = self._call("account_db")
        self._inside("setup", "account_db", database)
        return database

    def account_dir(self) -> Path | None:
        directory: Path | None = self._call("account_dir")
        self._inside("setup", "account_dir", directory)
        return directory

    def credentials(self) -> list[Path]:
        files: list[Path] = self._call("credentials")
        for at, path in enumerate(files):
            self._inside("setup", f"credentials[{at}]", path)
        return files

    def create_job(self, name: str, model_url: str) -> Job:
        job: Job = self._call("create_job", name, model_url)
        places = {"checkout": job.paths.checkout, "data": job.paths.data, "runner_files": job.paths.private}
        places |= {"tmp": job.paths.scratch} | {f"files[{at}]": path for at, path in enumerate(job.files)}
        for key, path in places.items():
            self._inside("create-job", key, path)
        return job

    def remove_job(self, job: Job) -> None:
        self._call("remove_job", job)

    def expected_tools(self) -> frozenset[str]:
        return self._call("expected_tools")  # type: ignore[no-any-return]

    def forbidden_tools(self) -> tuple[str, ...]:
        return self._call("forbidden_tools")  # type: ignore[no-any-return]

    def turn_off(self, layers: frozenset[str]) -> None:
        """`--layers each`: on the local copy, on the one in the host if any, and on every copy built later."""
        self.inner.turn_off(layers)  # type: ignore[attr-defined]
        self._off = layers
        if self._server is not None:
            self._server.call("turn_off", (layers,), OTHER_CALL_S)

    def _inside(self, verb: str, key: str, path: Path | None) -> None:
        """A ProtocolError, as a command's answer gets, unless `path` lies under STATE (or is None, or no host is
        entered): the harness reads and plants there from this machine, where only STATE is the host's own."""
        if path is None or self._server is None or self._state is None:
            return
        if not Path(os.path.normpath(path)).is_relative_to(os.path.normpath(self._state)):
            said = f"expected a path inside the state directory {self._state}, got {path}"
            raise ProtocolError(f"runner {verb}: field {key!r}: {said}")

    def _call(self, method: str, *args: Any) -> Any:
        if self._server is None:
            return getattr(self.inner, method)(*args)
        verb = method.replace("_", "-")
        return self._server.call(method, args, TIMEOUT_S.get(verb, OTHER_CALL_S))


class _Server:
    """The process inside the host that holds the runner's copy and answers each call."""

    def __init__(self, process: subprocess.Popen[bytes], argv: list[str], enter: tuple[str, ...]) -> None:
        self.process, self.argv, self.enter = process, argv, enter

    @classmethod
    def start(cls, enter: tuple[str, ...], build: tuple[Any, ...]) -> _Server:
        # nsenter leaves a command in the host's `/`: the verbs run in this directory, as a command runner's do
        argv = [*enter, "env", f"--chdir={os.getcwd()}", sys.executable, "-m", "boundary.runners.hosted"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # the runner's module too
        # a session of its own: a verb that hangs is stopped with everything the copy started (nsenter's child too)
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True)
        server = cls(process, argv, enter)
        with contextlib.suppress(BrokenPipeError):  # it died already: what it said is read below
            pickle_to(server._input, build)
        try:
            server._answer("building the runner", TIMEOUT_S["setup"])
        except BaseException:
            server.stop()
            raise
        return server

    @property
    def _input(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    def call(self, method: str, args: tuple[Any, ...], timeout_s: float) -> Any:
        if self._input.closed:
            raise HostedRunnerError(
                f"runner {method}: the runner's copy inside the host was stopped after an earlier call"
            )
        try:
            pickle_to(self._input, (method, args))
        except BrokenPipeError:
            raise self._died(method) from None
        return self._answer(method, timeout_s)

    def _answer(self, what: str, timeout_s: float) -> Any:
        assert self.process.stdout is not None
        try:
            frame = read_frame(self.process.stdout, time.monotonic() + timeout_s)
        except EOFError:
            raise self._died(what) from None
        if frame is None:
            self.stop()
            raise HostedRunnerError(
                f"runner {what}: expected an answer within {timeout_s:.0f} s (as a command runner's verb), got "
                "none; the runner's copy inside the host was stopped. Fix: see what the verb waits for"
            )
        kind, value, said = pickle.loads(frame)
        if kind == "ok":
            return value
        if isinstance(value, Exception):
            value.add_note(f"(raised by the runner's {what}, inside the host its jobs run on)\n{said}")
            raise value
        raise HostedRunnerError(f"runner {what} failed inside the host its jobs run on:\n{said}")

    def _died(self, what: str) -> HostedRunnerError:
        self.stop()
        code = self.process.returncode
        return HostedRunnerError(
            f"runner {what}: expected the runner's copy inside the host to answer, but it exited {code} "
            f"(`{' '.join(self.argv[-3:])}`; what it printed is above). Fix: run the runner's verbs by hand"
        )

    def stop(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def pickle_to(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes], deadline: float | None) -> bytes | None:
    """One length-prefixed frame; None when the deadline (if any) passes first; EOFError when the stream ends."""
    fd, data, wanted = stream.fileno(), b"", _LENGTH.size
    header = True
    while len(data) < wanted:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and (left <= 0 or not select.select([fd], [], [], left)[0]):
            return None
        chunk = os.read(fd, wanted - len(data))
        if not chunk:
            raise EOFError
        data += chunk
        if header and len(data) == wanted:
            wanted, data, header = _LENGTH.unpack(data)[0], b"", False
    return data


def _answer_of(function: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any, str]:
    """("ok", what it returned, "") or ("error", what it raised, its traceback)."""
    try:
        return ("ok", function(*args, **kwargs), "")
    except Exception as error:
        return ("error", error, traceback.format_exc())


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """Build the runner from the first frame, then answer each call until the input ends."""
    try:
        frame = read_frame(requests, None)
    except EOFError:
        return
    assert frame is not None
    factory, kwargs, off = pickle.loads(frame)
    built = _answer_of(factory, **kwargs)
    runner = built[1]
    if built[0] == "ok" and off:
        built = _answer_of(runner.turn_off, off)
    _send(answers, ("ok", None, "") if built[0] == "ok" else built)
    if built[0] != "ok":
        return
    while True:
        try:
            frame = read_frame(requests, None)
        except EOFError:
            return
        method, args = pickle.loads(frame or b"")
        _send(answers, _answer_of(getattr(runner, method), *args))


def _send(answers: IO[bytes], answer: tuple[str, Any, str]) -> None:
    try:
        pickle_to(answers, answer)
    except (pickle.PicklingError, TypeError, AttributeError) as error:  # the answer or its exception
        said = f"{answer[2]}\nits answer could not be sent back to boundary ({type(error).__name__}: {error})"
        pickle_to(answers, ("error", None, said.strip()))


def main() -> None:
    # The protocol keeps the process's own stdin and stdout; what the runner prints goes to stderr.
    requests = os.fdopen(os.dup(0), "rb", buffering=0)
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    serve(requests, answers)


if __name__ == "__main__":
    main()
