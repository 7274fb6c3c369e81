"""OpenAI Chat Completions, streaming: what opencode's openai-compatible provider speaks."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from boundary.model.script import ToolCall

PATH_SUFFIX = "/v1/chat/completions"


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a request the scripted model acts on."""

    tools: dict[str, dict[str, Any]] | None  # name -> JSON schema of its parameters
    issued_ids: frozenset[str]  # tool-call ids of earlier assistant turns
    results: dict[str, str]  # tool-call id -> the result the agent sent back

    @classmethod
    def parse(cls, body: dict[str, Any]) -> ChatRequest:
        tools = None
        if body.get("tools"):
            tools = {t["function"]["name"]: t["function"].get("parameters") or {} for t in body["tools"]}
        issued: set[str] = set()
        results: dict[str, str] = {}
        for message in body.get("messages", []):
            for call in message.get("tool_calls") or []:
                issued.add(call["id"])
            if message.get("role") == "tool":
                results[message["tool_call_id"]] = _text(message.get("content"))
        return cls(tools, frozenset(issued), results)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    payload = {
        "id": "chatcmpl-boundary",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload)}\n\n"


def stream_tool_calls(calls: list[ToolCall]) -> Iterator[str]:
    yield _chunk({"role": "assistant", "content": None})
    for index, call in enumerate(calls):
        function = {"name": call.tool, "arguments": call.arguments_json()}
        yield _chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": function}]})
    yield _chunk({}, "tool_calls")
    yield "data: [DONE]\n\n"


def stream_text(text: str) -> Iterator[str]:
    yield _chunk({"role": "assistant", "content": text})
    yield _chunk({}, "stop")
    yield "data: [DONE]\n\n"
