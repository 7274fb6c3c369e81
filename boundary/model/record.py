"""What the scripted model saw of one job: offered tools, tool results, errors."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class JobRecord:
    """Filled by the server while the job runs; read by the harness afterwards."""

    job: str
    offered: list[frozenset[str]] = field(default_factory=list)
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool -> its parameters' schema, as first sent
    results: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    finished: bool = False
    latencies_s: list[float] = field(default_factory=list)
    requested_at: list[float] = field(default_factory=list)  # epoch seconds of each request: where a job's time went
    issued_at: dict[str, float] = field(default_factory=dict)
    answered_at: dict[str, float] = field(default_factory=dict)
    checkpoints_done: set[int] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)  # calls never asked for: what they would wait for already held
    bodies: list[bytes] = field(default_factory=list)  # every request, as sent: what the job's context carried
    ended_on: dict[str, str] = field(default_factory=dict)  # call id -> the agent's last words: its job ended on it
    # What the agent named its session in request headers (opencode's X-Session-Id, codex's session_id, …), and
    # when first (monotonic): an id another job's tool may be handed to take that session up.
    session_seen_at: dict[str, float] = field(default_factory=dict)
    own_sessions: frozenset[str] = frozenset()  # those of the request the script's first step answered
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def note_body(self, raw: bytes, headers: dict[str, str] | None = None) -> frozenset[str]:
        """A request's body as sent, and the session ids its headers carry (returned)."""
        named = {value for name, value in (headers or {}).items() if "session" in name.lower() and len(value) >= 8}
        with self._lock:
            self.bodies.append(raw)
            for session in named:
                self.session_seen_at.setdefault(session, time.monotonic())
        return frozenset(named)

    def note_request(
        self, tools: dict[str, dict[str, Any]] | None, latency_s: float, deferred: frozenset[str] = frozenset()
    ) -> None:
        """A request came; `tools`: the tools it offered, by name, with their schemas (None: it offered none);
        `deferred`: those it named as loadable without their schemas, offered too."""
        with self._lock:
            self.requests += 1
            self.latencies_s.append(latency_s)
            self.requested_at.append(time.time() - latency_s)
            if tools is not None:
                self.offered.append(frozenset(tools) | deferred)
                self.schemas = {**tools, **self.schemas}

    def note_issued(self, call_ids: list[str], sessions: frozenset[str] = frozenset()) -> None:
        """Calls the script gave the job; `sessions`: what the request named, the job's own if first to."""
        with self._lock:
            self.own_sessions = self.own_sessions or sessions
            for call_id in call_ids:
                self.issued_at.setdefault(call_id, time.monotonic())

    def note_skipped(self, call_ids: list[str]) -> None:
        with self._lock:
            self.skipped.update(call_ids)

    def settled(self, call_id: str) -> bool:
        """The call's result came back, or it was never needed."""
        with self._lock:
            return call_id in self.results or call_id in self.skipped

    def results_so_far(self) -> dict[str, str]:
        with self._lock:
            return dict(self.results)

    def note_results(self, results: dict[str, str]) -> None:
        with self._lock:
            for call_id in results:
                self.answered_at.setdefault(call_id, time.monotonic())
            self.results.update(results)

    def named_while_out(self, call_id: str, session: str) -> bool:
        """A request named `session` between the call's issue and its result: the call started that session's
        conversation in this job (a tool that continues a session by id)."""
        with self._lock:
            seen, issued = self.session_seen_at.get(session), self.issued_at.get(call_id)
            answered = self.answered_at.get(call_id, float("inf"))
            return seen is not None and issued is not None and issued <= seen <= answered

    def call_duration_s(self, call_id: str) -> float | None:
        """From the step that issued the call to the request that brought its result back."""
        with self._lock:
            if call_id in self.issued_at and call_id in self.answered_at:
                return self.answered_at[call_id] - self.issued_at[call_id]
            return None

    def note_error(self, message: str) -> None:
        with self._lock:
            self.errors.append(f"{time.strftime('%H:%M:%S')} {message}")

    def merge(self, later: JobRecord) -> None:
        """Fold in what a later job answered for calls this one never did (the same job, run again)."""
        with self._lock, later._lock:
            for call_id, result in later.results.items():
                self.results.setdefault(call_id, result)
                self.issued_at.setdefault(call_id, later.issued_at.get(call_id, 0.0))
                self.answered_at.setdefault(call_id, later.answered_at.get(call_id, 0.0))
            self.offered += later.offered
            self.schemas = {**later.schemas, **self.schemas}
            self.skipped |= later.skipped
            self.errors += later.errors
            self.bodies += later.bodies
            for session, seen in later.session_seen_at.items():
                self.session_seen_at.setdefault(session, seen)

    @property
    def session_ids(self) -> set[str]:
        with self._lock:
            return set(self.session_seen_at)

    def offered_union(self) -> frozenset[str]:
        with self._lock:
            return frozenset().union(*self.offered) if self.offered else frozenset()
