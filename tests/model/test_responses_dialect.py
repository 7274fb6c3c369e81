"""The OpenAI Responses dialect (codex): parsing requests, streaming tool calls and text. Pure, no network."""

from __future__ import annotations

import json
from typing import Any

from boundary.model.conversation import schema_problems
from boundary.model.dialect import Dialect
from boundary.model.responses import CUSTOM_SCHEMA, Responses
from boundary.model.schema_calls import DESCRIPTION, HOSTED
from boundary.model.script import ToolCall

EXEC_SCHEMA = {
    "type": "object",
    "properties": {"cmd": {"type": "string"}, "workdir": {"type": "string"}},
    "required": ["cmd"],
    "additionalProperties": False,
}
PATCH_FORMAT = {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}
# The shapes codex 0.171.0 sends (trimmed): function, custom (freeform), and built-in tools.
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": "exec_command",
        "description": "Runs a command",
        "strict": False,
        "parameters": EXEC_SCHEMA,
    },
    {"type": "custom", "name": "apply_patch", "description": "FREEFORM", "format": PATCH_FORMAT},
    {"type": "function", "name": "get_goal", "strict": False, "parameters": {"type": "object", "properties": {}}},
    {"type": "tool_search", "execution": "client", "parameters": {"type": "object", "properties": {"query": {}}}},
    {"type": "web_search", "external_web_access": False},
    {
        "type": "namespace",
        "name": "multi_agent_v1",
        "tools": [
            {"type": "function", "name": "close_agent", "parameters": {"type": "object", "properties": {"target": {}}}}
        ],
    },
]
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}


def events(stream: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) of each SSE event; the name line and the data's type agree."""
    parsed = []
    for block in "".join(stream).split("\n\n"):
        if not block:
            continue
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        data = json.loads(lines["data"])
        assert lines["event"] == data["type"]
        parsed.append((lines["event"], data))
    return parsed


def done_items(stream: list[str]) -> list[dict[str, Any]]:
    return [data["item"] for name, data in events(stream) if name == "response.output_item.done"]


def test_tools_of_every_kind_are_offered() -> None:
    request = Responses().parse({"model": "gpt-5.5", "input": [USER], "tools": TOOLS, "stream": True})
    assert request.tools is not None
    assert request.tools["exec_command"] == {**EXEC_SCHEMA, DESCRIPTION: "Runs a command"}  # kept for its lists
    assert request.tools["apply_patch"] == {**CUSTOM_SCHEMA, "format": PATCH_FORMAT}
    assert request.tools["tool_search"] == TOOLS[3]["parameters"]
    assert request.tools["web_search"] == {HOSTED: "web_search"}  # the provider runs it: nothing of the job's
    assert "multi_agent_v1.close_agent" in request.tools
    assert request.issued_ids == frozenset() and request.results == {}


def test_request_without_tools() -> None:
    assert Responses().parse({"input": [USER]}).tools is None
    assert Responses().parse({"input": [USER], "tools": []}).tools is None


def test_issued_ids_and_results_from_input_items() -> None:
    body = {
        "tools": TOOLS,
        "input": [
            USER,
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Process exited with code 0\nOutput:\nhi\n"},
            {"type": "custom_tool_call", "id": "ctc_1", "call_id": "c2", "name": "apply_patch", "input": "*** Begin"},
            {
                "type": "custom_tool_call_output",
                "call_id": "c2",
                "output": [{"type": "input_text", "text": "Success."}],
            },
            {"type": "function_call", "id": "fc_3", "call_id": "c3", "name": "exec_command", "arguments": "{}"},
        ],
    }
    request = Responses().parse(body)
    assert request.issued_ids == frozenset({"c1", "c2", "c3"})
    assert request.results == {"c1": "Process exited with code 0\nOutput:\nhi\n", "c2": "Success."}


def test_function_call_stream() -> None:
    dialect = Responses()
    dialect.parse({"input": [USER], "tools": TOOLS})
    calls = [ToolCall("c1", "exec_command", {"cmd": "cat a"}), ToolCall("c2", "exec_command", {"cmd": "cat b"})]
    parsed = events(list(dialect.stream_tool_calls(calls)))
    names = [name for name, _ in parsed]
    assert names[0] == "response.created" and names[-1] == "response.completed"
    assert names[1:-1] == ["response.output_item.added", "response.output_item.done"] * 2
    done = done_items(list(dialect.stream_tool_calls(calls)))
    assert [(i["type"], i["call_id"], i["name"], i["status"]) for i in done] == [
        ("function_call", "c1", "exec_command", "completed"),
        ("function_call", "c2", "exec_command", "completed"),
    ]
    assert json.loads(done[0]["arguments"]) == {"cmd": "cat a"}
    assert len({i["id"] for i in done}) == 2
    completed = parsed[-1][1]["response"]
    assert completed["status"] == "completed" and completed["usage"]["total_tokens"] >= 0
    assert [i["call_id"] for i in completed["output"]] == ["c1", "c2"]


def test_custom_tool_call_streams_raw_input() -> None:
    """apply_patch is freeform: the script passes {"input": patch}; codex gets a custom_tool_call with the raw text."""
    dialect = Responses()
    request = dialect.parse({"input": [USER], "tools": TOOLS})
    patch = "*** Begin Patch\n*** Add File: out.txt\n+x\n*** End Patch\n"
    call = ToolCall("c1", "apply_patch", {"input": patch})
    assert request.tools is not None and schema_problems(call, request.tools) == []
    (item,) = done_items(list(dialect.stream_tool_calls([call])))
    assert item["type"] == "custom_tool_call" and item["call_id"] == "c1" and item["name"] == "apply_patch"
    assert item["input"] == patch and "arguments" not in item


def test_custom_schema_catches_json_arguments() -> None:
    tools = Responses().parse({"tools": TOOLS}).tools
    assert tools is not None
    assert schema_problems(ToolCall("c1", "apply_patch", {"patch": "x"}), tools)


def test_namespaced_tool_streams_with_namespace() -> None:
    dialect = Responses()
    dialect.parse({"tools": TOOLS})
    call = ToolCall("c1", "multi_agent_v1.close_agent", {"target": "x"})
    (item,) = done_items(list(dialect.stream_tool_calls([call])))
    assert (item["type"], item["namespace"], item["name"]) == ("function_call", "multi_agent_v1", "close_agent")


def test_unknown_tool_streams_as_function_call() -> None:
    """Before any request offered tools, nothing is known to be freeform: a plain function call."""
    (item,) = done_items(list(Responses().stream_tool_calls([ToolCall("c1", "apply_patch", {"input": "x"})])))
    assert item["type"] == "function_call" and json.loads(item["arguments"]) == {"input": "x"}


def test_text_stream() -> None:
    parsed = events(list(Responses().stream_text("all done")))
    assert [n for n, _ in parsed] == [
        "response.created",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
    ]
    message = parsed[2][1]["item"]
    assert message["type"] == "message" and message["role"] == "assistant"
    assert message["content"] == [{"type": "output_text", "text": "all done", "annotations": []}]
    assert parsed[-1][1]["response"]["output"] == [message]


def test_sequence_numbers_increase() -> None:
    parsed = events(list(Responses().stream_text("x")))
    assert [d["sequence_number"] for _, d in parsed] == list(range(1, len(parsed) + 1))


def test_is_a_dialect() -> None:
    dialect: Dialect = Responses()
    assert dialect.path_suffix == "/v1/responses" and dialect.side_routes == {}


# codex 0.171's answer to a tool search (seen live, gpt-5.5, an MCP server configured): the tools it found.
FOUND = {
    "type": "namespace",
    "name": "mcp__files",
    "tools": [
        {
            "type": "function",
            "name": "read_text",
            "defer_loading": True,
            "parameters": {"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]},
        }
    ],
}


def test_tools_held_back_by_tool_search_are_searched_for_then_offered_and_called_in_their_namespace() -> None:
    """Issue 43 item 2: codex's tool_search holds an MCP server's tools back, unnamed. The scripted model searches
    once, before the script, with the words tools are described by; what the search brought back is offered."""
    dialect = Responses()
    first = dialect.parse({"tools": TOOLS, "input": []})
    load = first.load_deferred
    assert load is not None and load.tool == "tool_search" and "file" in load.args["query"].split()
    (item,) = done_items(list(dialect.stream_tool_calls([load])))
    assert item["type"] == "tool_search_call" and item["call_id"] == load.id and item["arguments"] == load.args
    searched = {"type": "tool_search_call", "call_id": load.id, "execution": "client", "arguments": load.args}
    output = {"type": "tool_search_output", "call_id": load.id, "execution": "client", "tools": [FOUND]}
    later = dialect.parse({"tools": TOOLS, "input": [searched, output]})
    assert later.load_deferred is None and load.id in later.issued_ids
    assert (later.tools or {})["mcp__files.read_text"]["required"] == ["file"]
    call = ToolCall("c1", "mcp__files.read_text", {"file": "/x"})
    (made,) = done_items(list(dialect.stream_tool_calls([call])))
    assert (made["namespace"], made["name"]) == ("mcp__files", "read_text")
    assert Responses().parse({"tools": TOOLS[:3], "input": []}).load_deferred is None  # no search tool offered
