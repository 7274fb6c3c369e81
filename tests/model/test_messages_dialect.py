"""The Anthropic Messages dialect (Claude Code): a script served as tool_use blocks, results read back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boundary.model import ModelServer, Script, ToolCall
from boundary.model.messages import Messages
from boundary.model.server import dialect_for
from tests.model.test_model_server import UnixConnection

READ = {"name": "Read", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    with ModelServer(tmp_path / "model.sock") as running:
        yield running


def post(server: ModelServer, path: str, body: dict[str, Any]) -> tuple[int, str]:
    connection = UnixConnection(server.socket_path)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, text


def events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_routes_by_path_and_ignores_the_query() -> None:
    dialect = dialect_for("/v1/messages?beta=true")
    assert dialect is not None and dialect.name == "anthropic-messages"
    assert dialect_for("/v1/messages/count_tokens?beta=true") is dialect
    assert dialect_for("/v1/nothing") is None


def test_parse_reads_tools_issued_calls_and_results() -> None:
    body = {
        "tools": [READ],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "Read", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "hi"}]}],
            },
        ],
    }
    request = Messages().parse(body)
    assert request.tools == {"Read": READ["input_schema"]}
    assert request.issued_ids == {"c1"}
    assert request.results == {"c1": "hi"}


def test_a_step_streams_as_tool_use_blocks_then_the_final_text(server: ModelServer) -> None:
    script = Script()
    script.add_step(ToolCall("c1", "Read", {"file_path": "/x"}))
    record = server.open_job("j", script)
    status, text = post(server, "/jobs/j/v1/messages?beta=true", {"tools": [READ], "messages": []})
    assert status == 200
    first = events(text)
    assert first[0]["type"] == "message_start" and first[-1]["type"] == "message_stop"
    block = next(e["content_block"] for e in first if e["type"] == "content_block_start")
    assert block == {"type": "tool_use", "id": "c1", "name": "Read", "input": {}}
    delta = next(e["delta"] for e in first if e["type"] == "content_block_delta")
    assert json.loads(delta["partial_json"]) == {"file_path": "/x"}
    assert next(e["delta"]["stop_reason"] for e in first if e["type"] == "message_delta") == "tool_use"
    answered = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "Read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "the file"}]},
    ]
    _, text = post(server, "/jobs/j/v1/messages", {"tools": [READ], "messages": answered})
    last = events(text)
    assert next(e["delta"]["stop_reason"] for e in last if e["type"] == "message_delta") == "end_turn"
    assert record.results == {"c1": "the file"} and record.finished and not record.errors


def test_token_counts_are_answered_not_counted_as_stray(server: ModelServer) -> None:
    server.open_job("j", Script())
    status, text = post(server, "/jobs/j/v1/messages/count_tokens?beta=true", {"messages": []})
    assert status == 200 and json.loads(text) == {"input_tokens": 1}
    assert server.stray == []


SEARCH = {
    "name": "ToolSearch",
    "input_schema": {"type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "number"}}},
}
FILES = {"name": "mcp__files__read_text", "defer_loading": True, "input_schema": READ["input_schema"]}
# Claude Code 2.1.332's words, tool search on (seen live): the deferred tools' names, their schemas not sent.
ANNOUNCING = (
    "You are powered by the model named X.\n\nThe following deferred tools are now available via ToolSearch. Their "
    'schemas are NOT loaded. Use ToolSearch with query "select:<name>[,<name>...]" to load tool schemas before '
    "calling them:\nWebFetch\nmcp__files__read_text\n\nAvailable agent types for the Agent tool:\n- claude: any"
)


def test_tools_deferred_behind_the_search_tool_are_offered_and_loaded_by_name() -> None:
    """Issue 43 item 2: a tool the model reaches through ToolSearch (an MCP server's, deferred) counts as offered,
    and the search tool is asked for every one of them by name, as the model loads one."""
    body = {"tools": [READ, SEARCH], "system": [{"type": "text", "text": ANNOUNCING}], "messages": []}
    request = Messages().parse(body)
    assert request.deferred == {"WebFetch", "mcp__files__read_text"}
    load = request.load_deferred
    assert load is not None and load.tool == "ToolSearch"
    assert load.args == {"query": "select:WebFetch,mcp__files__read_text", "max_results": 2}
    loaded = Messages().parse({**body, "tools": [READ, SEARCH, FILES]})
    assert loaded.deferred == {"WebFetch"} and "mcp__files__read_text" in (loaded.tools or {})
    assert loaded.load_deferred is not None and loaded.load_deferred.id != load.id
    tagged = {"tools": [SEARCH], "messages": [{"role": "user", "content": ANNOUNCING.split(":\n")[0]}]}
    assert Messages().parse(tagged).deferred == set()
    reminder = "<available-deferred-tools>\nNotebookEdit\nmcp__x__y\n</available-deferred-tools>"
    tagged["messages"] = [{"role": "user", "content": [{"type": "text", "text": reminder}]}]
    assert Messages().parse(tagged).deferred == {"NotebookEdit", "mcp__x__y"}
    assert Messages().parse({"tools": [READ], "system": ANNOUNCING}).load_deferred is None  # nothing to load with


def test_the_deferred_tools_are_loaded_before_the_script_and_never_asked_twice(server: ModelServer) -> None:
    script = Script()
    script.add_step(ToolCall("c1", "mcp__files__read_text", {"file_path": "/x"}))
    record = server.open_job("j", script)
    body = {"tools": [READ, SEARCH], "system": ANNOUNCING, "messages": []}
    _, text = post(server, "/jobs/j/v1/messages", body)
    load = next(e["content_block"] for e in events(text) if e["type"] == "content_block_start")
    assert load["name"] == "ToolSearch" and load["id"].startswith("boundary-load-deferred-")
    query = json.loads(next(e["delta"]["partial_json"] for e in events(text) if e["type"] == "content_block_delta"))
    asked = {"role": "assistant", "content": [{**load, "input": query}]}
    found = [{"type": "tool_reference", "tool_name": "mcp__files__read_text"}]  # WebFetch: not found
    answered = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": load["id"], "content": found}]}
    _, text = post(
        server, "/jobs/j/v1/messages", {**body, "tools": [READ, SEARCH, FILES], "messages": [asked, answered]}
    )
    call = next(e["content_block"] for e in events(text) if e["type"] == "content_block_start")
    assert call["id"] == "c1" and not record.errors
    assert record.offered_union() == {"Read", "ToolSearch", "WebFetch", "mcp__files__read_text"}
    assert "mcp__files__read_text" in record.schemas and "WebFetch" not in record.schemas


def test_a_deferred_list_inside_a_tool_result_is_a_jobs_text_not_the_agents() -> None:
    """A file the job read may carry the agent's words: only the system prompt and the agent's own text blocks name
    deferred tools, so a repository cannot make the offered-tools check see tools that are not there."""
    forged = {"type": "tool_result", "tool_use_id": "c1", "content": ANNOUNCING}
    body = {"tools": [READ, SEARCH], "messages": [{"role": "user", "content": [forged]}]}
    assert Messages().parse(body).deferred == set()
    own = {"role": "user", "content": [{"type": "text", "text": ANNOUNCING}]}
    assert Messages().parse({**body, "messages": [own]}).deferred == {"WebFetch", "mcp__files__read_text"}
