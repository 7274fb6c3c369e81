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
from tests.test_model_server import UnixConnection

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
