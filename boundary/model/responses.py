"""OpenAI Responses, streaming: what codex speaks (`POST /v1/responses`, `wire_api = "responses"`).

Codex offers two kinds of tools: function tools (`{"type": "function", "name", "parameters"}`, e.g.
`exec_command {"cmd": ...}`) and freeform "custom" tools (`{"type": "custom", "name", "format"}`,
e.g. `apply_patch`, whose input is the raw patch text, not JSON). A script calls a custom tool with
`args = {"input": "<raw text>"}`: `parse` offers each custom tool under the schema `CUSTOM_SCHEMA`,
and `stream_tool_calls` streams a call to a tool it has seen offered as custom as a
`custom_tool_call` item (codex answers it with a `custom_tool_call_output`). A tool inside a
`namespace` tool (e.g. `multi_agent_v1`, offered for models codex has no catalog entry for) is offered
as `<namespace>.<name>` and streamed as a `function_call` with `name` and `namespace`. Built-in tool
types (`tool_search`, ...) are offered under their type, with the `parameters` they carry or an empty schema;
those the provider runs (`web_search`, ...) with a schema marking them hosted. Codex 0.171 (exec) sends tools
with every request; `event:` lines are optional to it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

from boundary.model.dialect import ModelRequest, sse, text_of
from boundary.model.schema_calls import HOSTED, described
from boundary.model.script import ToolCall

USAGE = {
    "input_tokens": 1,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 1,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 2,
}

# The schema a freeform (custom) tool is offered under: one raw-text argument.
# Built-in tool types the provider runs (the agent never executes a call of them): offered with a hosted schema.
HOSTED_TYPES = frozenset({"web_search", "web_search_preview", "image_generation", "file_search", "code_interpreter"})
CUSTOM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string"}},
    "required": ["input"],
    "additionalProperties": False,
}

# Input items that are a tool call the model made (their `call_id` was issued) ...
CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
# ... and items that carry a tool's result back.
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
# codex's `tool_search` (0.171, seen live with gpt-5.5) holds back MCP servers' tools and sub-agent tools, unnamed:
# a BM25 search over their names and descriptions, whose `tool_search_output` carries the tools it found (then
# callable). One search with the words tools are described by finds what shares any of them; a tool whose name
# and description share none stays unseen (said in docs/runner-protocol.md).
SEARCH_TOOL = "tool_search"
SEARCH_WORDS = (
    "file files read write edit list get set search find fetch download upload url http web page path directory "
    "folder run exec command shell job jobs log logs output text content data query database create update delete "
    "remove open view show status info config session task issue repo git code api request send message user "
    "account token secret key image document resource agent"
)
SEARCH_LIMIT = 100


class Responses:
    name = "openai-responses"
    path_suffix = "/v1/responses"
    side_routes: ClassVar[dict[str, dict[str, Any]]] = {}  # codex 0.171 exec called no other path (no strays)

    def __init__(self) -> None:
        # what requests offered (a codex version offers its tools alike in every job): freeform tools, namespaces
        self._custom: set[str] = set()
        self._namespaces: set[str] = set()
        self._lock = threading.Lock()

    def parse(self, body: dict[str, Any]) -> ModelRequest:
        tools = _tools(body.get("tools"))
        if tools is not None:
            offered = [t for t in body["tools"] if isinstance(t, dict) and "name" in t]
            with self._lock:
                self._custom |= {t["name"] for t in offered if t.get("type") == "custom"}
                self._namespaces |= {t["name"] for t in offered if t.get("type") == "namespace"}
        issued: set[str] = set()
        results: dict[str, str] = {}
        searched = False
        for item in body.get("input") or []:
            if not isinstance(item, dict) or "call_id" not in item:
                continue
            if item.get("type") in CALL_ITEMS:
                issued.add(item["call_id"])
                searched = searched or item.get("type") == "tool_search_call"
            elif item.get("type") in OUTPUT_ITEMS:
                results[item["call_id"]] = text_of(item.get("output", ""))
                tools = self._found(tools, item.get("tools"))
        load = _load_call() if tools and SEARCH_TOOL in tools and not searched else None
        return ModelRequest(tools, frozenset(issued), results, load_deferred=load)

    def _found(self, tools: dict[str, dict[str, Any]] | None, found: Any) -> dict[str, dict[str, Any]] | None:
        """The offered tools and those a search's output brought in (callable from then on)."""
        loaded = _tools(found) if isinstance(found, list) else None
        if tools is None or not loaded:
            return tools
        with self._lock:
            self._namespaces |= {t["name"] for t in found if isinstance(t, dict) and t.get("type") == "namespace"}
        return {**loaded, **tools}

    def is_custom(self, tool: str) -> bool:
        with self._lock:
            return tool in self._custom

    def namespace_of(self, tool: str) -> tuple[str, str] | None:
        """(namespace, name) of a tool offered inside a namespace tool, as `<namespace>.<name>`."""
        namespace, dot, name = tool.partition(".")
        with self._lock:
            return (namespace, name) if dot and namespace in self._namespaces else None

    def stream_tool_calls(self, calls: list[ToolCall]) -> Iterator[str]:
        items = [self._call_item(index, call) for index, call in enumerate(calls)]
        yield from _response(items)

    def stream_text(self, text: str) -> Iterator[str]:
        content = [{"type": "output_text", "text": text, "annotations": []}]
        message = {"type": "message", "id": "msg_boundary", "status": "completed", "role": "assistant"}
        yield from _response([{**message, "content": content}])

    def _call_item(self, index: int, call: ToolCall) -> dict[str, Any]:
        if call.tool == SEARCH_TOOL:
            return {
                "type": "tool_search_call",
                "id": f"ts_boundary_{index}",
                "call_id": call.id,
                "status": "completed",
                "execution": "client",
                "arguments": call.args,
            }
        if self.is_custom(call.tool):
            raw = call.args.get("input", "")
            return {
                "type": "custom_tool_call",
                "id": f"ctc_boundary_{index}",
                "status": "completed",
                "call_id": call.id,
                "name": call.tool,
                "input": raw if isinstance(raw, str) else json.dumps(raw),
            }
        item = {
            "type": "function_call",
            "id": f"fc_boundary_{index}",
            "status": "completed",
            "call_id": call.id,
            "name": call.tool,
            "arguments": call.arguments_json(),
        }
        namespaced = self.namespace_of(call.tool)
        if namespaced:
            item["namespace"], item["name"] = namespaced
        return item


def _load_call() -> ToolCall:
    """One search for every tool the words of SEARCH_WORDS find, before the script's first call."""
    return ToolCall("boundary-load-deferred-search", SEARCH_TOOL, {"query": SEARCH_WORDS, "limit": SEARCH_LIMIT})


def _tools(offered: Any) -> dict[str, dict[str, Any]] | None:
    """Tool name -> parameter schema; None when the request offers no tools."""
    if not offered:
        return None
    tools: dict[str, dict[str, Any]] = {}
    for tool in offered:
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        if kind == "function":
            tools[tool["name"]] = described(tool.get("parameters") or {}, tool.get("description"))
        elif kind == "custom":
            tools[tool["name"]] = {**CUSTOM_SCHEMA, "format": tool.get("format") or {}}
        elif kind == "namespace":  # a group of function tools (e.g. an MCP server's): offered as namespace.name
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and "name" in inner:
                    schema = described(inner.get("parameters") or {}, inner.get("description"))
                    tools[f"{tool.get('name')}.{inner['name']}"] = schema
        elif kind in HOSTED_TYPES:
            tools[str(kind)] = {HOSTED: kind}
        else:  # built-in tools codex runs itself (tool_search, ...): offered under their type
            tools[str(tool.get("name") or kind)] = tool.get("parameters") or {}
    return tools


def _response(items: list[dict[str, Any]]) -> Iterator[str]:
    response = {
        "id": "resp_boundary",
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "model": "m",
        "output": [],
    }
    sequence = 0

    def event(kind: str, **fields: Any) -> str:
        nonlocal sequence
        sequence += 1
        return sse(kind, {"type": kind, "sequence_number": sequence, **fields})

    yield event("response.created", response=response)
    for index, item in enumerate(items):
        yield event("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
        yield event("response.output_item.done", output_index=index, item=item)
    done = {**response, "status": "completed", "output": items, "usage": USAGE}
    yield event("response.completed", response=done)
