"""OpenAI Chat Completions, streaming: what opencode's openai-compatible provider speaks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, ClassVar

from boundary.model.dialect import ModelRequest, sse, text_of
from boundary.model.schema_calls import described
from boundary.model.script import ToolCall


class ChatCompletions:
    name = "openai-chat"
    path_suffix = "/v1/chat/completions"
    side_routes: ClassVar[dict[str, dict[str, Any]]] = {}

    def parse(self, body: dict[str, Any]) -> ModelRequest:
        tools = None
        if body.get("tools"):
            tools = {t["function"]["name"]: _schema(t["function"]) for t in body["tools"]}
        issued: set[str] = set()
        results: dict[str, str] = {}
        for message in body.get("messages", []):
            for call in message.get("tool_calls") or []:
                issued.add(call["id"])
            if message.get("role") == "tool":
                results[message["tool_call_id"]] = text_of(message.get("content"))
        return ModelRequest(tools, frozenset(issued), results)

    def stream_tool_calls(self, calls: list[ToolCall]) -> Iterator[str]:
        yield _chunk({"role": "assistant", "content": None})
        for index, call in enumerate(calls):
            function = {"name": call.tool, "arguments": call.arguments_json()}
            yield _chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": function}]})
        yield _chunk({}, "tool_calls")
        yield "data: [DONE]\n\n"

    def stream_text(self, text: str) -> Iterator[str]:
        yield _chunk({"role": "assistant", "content": text})
        yield _chunk({}, "stop")
        yield "data: [DONE]\n\n"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    payload = {
        "id": "chatcmpl-boundary",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return sse(None, payload)


def _schema(function: dict[str, Any]) -> dict[str, Any]:
    return described(function.get("parameters") or {}, function.get("description"))
