"""Anthropic Messages, streaming: what Claude Code speaks (`POST /v1/messages?beta=true`)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from boundary.model.dialect import ModelRequest, sse, text_of
from boundary.model.schema_calls import described
from boundary.model.script import ToolCall

USAGE = {"input_tokens": 1, "output_tokens": 1}

# How Claude Code names the tools it defers behind its search tool (2.1.332, seen live, tool search on by default
# with a model URL of one's own): the system prompt's list, one name a line, or a reminder's tagged list. Their
# schemas reach the model only once it asks the search tool for them (`select:A,B`).
ANNOUNCED = (
    re.compile(r"deferred tools are now available via (?P<search>\w+)\b[^\n]*\n(?P<names>(?:[\w.:@/-]+\n)+)"),
    re.compile(r"<available-deferred-tools>\s*(?P<names>.*?)</available-deferred-tools>", re.S),
)
SEARCH_TOOL = "ToolSearch"


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
        deferred, search = _announced(body)
        deferred -= set(tools or {})
        load = _load_call(search, deferred - _asked(body, search), tools or {})
        return ModelRequest(tools, frozenset(issued), results, deferred=frozenset(deferred), load_deferred=load)

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


def _announced(body: dict[str, Any]) -> tuple[set[str], str]:
    """The tool names the request announces as deferred, and the search tool that loads them."""
    texts = [text_of(body.get("system", ""))]
    texts += [
        _own_text(message.get("content", "")) for message in body.get("messages", []) if isinstance(message, dict)
    ]
    names: set[str] = set()
    search = SEARCH_TOOL
    for pattern in ANNOUNCED:
        for found in (m for text in texts for m in pattern.finditer(text)):
            names.update(found["names"].split())
            search = found.groupdict().get("search") or search
    return names, search


def _own_text(content: Any) -> str:
    """A message's text the agent wrote itself: never a tool's result, where a job's file could forge the list."""
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "\n".join(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text" and "text" in b)


def _asked(body: dict[str, Any], search: str) -> set[str]:
    """The tools the conversation's earlier calls of the search tool asked for by name: one it did not find stays
    deferred, and is not asked for again."""
    asked: set[str] = set()
    for message in body.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            query = block.get("input", {}).get("query") if block.get("name") == search else None
            if isinstance(query, str) and query.startswith("select:"):
                asked.update(query.removeprefix("select:").split(","))
    return asked


def _load_call(search: str, deferred: set[str], tools: dict[str, dict[str, Any]]) -> ToolCall | None:
    """The search tool asked for every deferred tool not asked for yet, by name, as the model loads one; its id
    names what it asks, so a retried request is asked the same."""
    if not deferred or search not in tools:
        return None
    names = ",".join(sorted(deferred))
    args: dict[str, Any] = {"query": f"select:{names}"}
    if "max_results" in tools[search].get("properties", {}):
        args["max_results"] = len(deferred)
    digest = hashlib.sha256(names.encode()).hexdigest()[:12]
    return ToolCall(f"boundary-load-deferred-{digest}", search, args)


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
