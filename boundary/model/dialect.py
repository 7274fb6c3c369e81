"""What every model API the scripted model speaks has in common, and the registry of dialects by request path.

A dialect turns a request body into a `ModelRequest` (the tools offered, the
call ids the agent already holds, the results it sent back) and writes a turn
(tool calls, or a final text) as that API's event stream.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from boundary.model.script import ToolCall


@dataclass(frozen=True)
class ModelRequest:
    """The parts of a request the scripted model acts on."""

    tools: dict[str, dict[str, Any]] | None  # name -> JSON schema of its parameters; None: a request without tools
    issued_ids: frozenset[str]  # tool-call ids of earlier assistant turns
    results: dict[str, str]  # tool-call id -> the result the agent sent back
    sessions: frozenset[str] = frozenset()  # the session ids its headers name (set by the server)
    # Tools the agent named as loadable through its search tool but has not sent the schemas of (Claude Code's
    # deferred tools): offered all the same, since the model may load any of them.
    deferred: frozenset[str] = frozenset()
    load_deferred: ToolCall | None = None  # the call to the agent's search tool that loads every deferred tool


class Dialect(Protocol):
    name: str
    path_suffix: str  # e.g. "/v1/chat/completions": the request path after /jobs/<job>
    side_routes: ClassVar[dict[str, dict[str, Any]]]  # other paths the agent calls, and the JSON they are answered with

    def parse(self, body: dict[str, Any]) -> ModelRequest: ...

    def stream_tool_calls(self, calls: list[ToolCall]) -> Iterator[str]: ...

    def stream_text(self, text: str) -> Iterator[str]: ...


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts with text (nested results flattened)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(text_of(part.get("text", part.get("content", ""))) for part in content if isinstance(part, dict))
    return json.dumps(content)


def sse(event: str | None, payload: dict[str, Any]) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n"
