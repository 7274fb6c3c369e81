"""Anthropic Messages, streaming: what Claude Code speaks (`POST /v1/messages?beta=true`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, ClassVar

from boundary.model.dialect import ModelRequest, sse, text_of
from boundary.model.schema_calls import described
from boundary.model.script import ToolCall

USAGE = {"input_tokens": 1, "output_tokens": 1}


class Messages:
    name = "anthropic-messages"
    path_suffix = "/v1/messages"
    # Claude Code counts a large tool result's tokens before it sends it on.
    side_routes: ClassVar[dict[str, dict[str, Any]]] = {"/v1/messages/count_tokens": {"input_tokens": 1}}

    def parse(self, body: dict[str, Any]) -> ModelRequest:
        tools = None
        if body.get("tools"):
            offered = [t for t in body["tools"] if "name" in t]
            tools = {t["name"]: described(t.get("input_schema") or {}, t.get("description")) for t in offered}
        issued: set[str] = set()
        results: dict[str, str] = {}
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_use":
                    issued.add(block["id"])
                elif block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = text_of(block.get("content", ""))
        return ModelRequest(tools, frozenset(issued), results)

    def stream_tool_calls(self, calls: list[ToolCall]) -> Iterator[str]:
        yield _message_start()
        for index, call in enumerate(calls):
            block = {"type": "tool_use", "id": call.id, "name": call.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call.args)}
            yield from _block(index, block, delta)
        yield from _message_end("tool_use")

    def stream_text(self, text: str) -> Iterator[str]:
        yield _message_start()
        yield from _block(0, {"type": "text", "text": ""}, {"type": "text_delta", "text": text})
        yield from _message_end("end_turn")


def _message_start() -> str:
    message: dict[str, Any] = {
        "id": "msg_boundary",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": USAGE,
    }
    return sse("message_start", {"type": "message_start", "message": message})


def _block(index: int, block: dict[str, Any], delta: dict[str, Any]) -> Iterator[str]:
    yield sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
    yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def _message_end(stop_reason: str) -> Iterator[str]:
    delta = {"stop_reason": stop_reason, "stop_sequence": None}
    yield sse("message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 1}})
    yield sse("message_stop", {"type": "message_stop"})
