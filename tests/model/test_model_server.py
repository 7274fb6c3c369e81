"""The scripted model server: OpenAI chat streaming, per-job routing, recording, schema checks."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from boundary.model import ModelServer, Script, ToolCall

READ_SCHEMA = {"type": "object", "properties": {"filePath": {"type": "string"}}, "required": ["filePath"]}
TOOLS = [{"type": "function", "function": {"name": "read", "parameters": READ_SCHEMA}}]


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost")
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(str(self.path))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ModelServer]:
    with ModelServer(tmp_path / "model.sock") as running:
        yield running


def post(
    server: ModelServer, job: str, body: dict[str, Any], headers: dict[str, str] | None = None
) -> tuple[int, list[dict[str, Any]]]:
    connection = UnixConnection(server.socket_path)
    connection.request(
        "POST",
        f"/jobs/{job}/v1/chat/completions",
        json.dumps(body),
        {"Content-Type": "application/json", **(headers or {})},
    )
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    events = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]
    assert response.status != 200 or text.rstrip().endswith("data: [DONE]")
    return response.status, events


def tool_calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for e in events for c in e["choices"][0]["delta"].get("tool_calls") or []]


def finish(events: list[dict[str, Any]]) -> str | None:
    return next((e["choices"][0]["finish_reason"] for e in events if e["choices"][0]["finish_reason"]), None)


def history(*results: tuple[str, str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for call_id, content in results:
        call = {"id": call_id, "type": "function", "function": {"name": "read", "arguments": "{}"}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return messages


def test_request_without_tools_gets_text(server: ModelServer) -> None:
    """The session-title request carries no tools: it gets plain text and does not advance the script."""
    record = server.open_job("j", Script([[ToolCall("c1", "read", {"filePath": "/x"})]]))
    status, events = post(server, "j", {"messages": history()})
    assert status == 200 and finish(events) == "stop"
    assert record.offered == [] and record.requests == 1


def test_script_replays_steps_then_final_text(server: ModelServer) -> None:
    """Each step is streamed as tool calls; the results are recorded; then the final text ends the job."""
    record = server.open_job("j", Script([[ToolCall("c1", "read", {"filePath": "/x"})]], final_text="bye"))
    _, first = post(server, "j", {"messages": history(), "tools": TOOLS})
    assert finish(first) == "tool_calls"
    assert [c["id"] for c in tool_calls(first)] == ["c1"]
    assert json.loads(tool_calls(first)[0]["function"]["arguments"]) == {"filePath": "/x"}
    _, second = post(server, "j", {"messages": history(("c1", "the result")), "tools": TOOLS})
    assert finish(second) == "stop"
    assert record.results == {"c1": "the result"} and record.finished and not record.errors
    assert record.offered == [frozenset({"read"}), frozenset({"read"})]


def test_the_session_ids_a_request_names_in_its_headers_are_kept(server: ModelServer) -> None:
    """opencode sends X-Session-Id, codex session_id: another job's tool may be handed them (tool attacks)."""
    record = server.open_job("j", Script())
    post(server, "j", {"messages": history()}, {"X-Session-Id": "ses_0123456789abcdef", "X-Request": "r-0123456789"})
    post(server, "j", {"messages": history()}, {"session_id": "019a2407-83ae-7761-945c-1123d8604548", "x-s": "ab"})
    assert record.session_ids == {"ses_0123456789abcdef", "019a2407-83ae-7761-945c-1123d8604548"}


def test_retried_request_gets_the_same_step(server: ModelServer) -> None:
    """The next step is read off the conversation, so a retry does not skip a step."""
    server.open_job("j", Script([[ToolCall("c1", "read", {"filePath": "/x"})]]))
    _, first = post(server, "j", {"messages": history(), "tools": TOOLS})
    _, again = post(server, "j", {"messages": history(), "tools": TOOLS})
    assert tool_calls(first) == tool_calls(again)


def test_renamed_argument_is_an_error(server: ModelServer) -> None:
    """A pinned upgrade that renames a tool argument fails clearly instead of probing nothing."""
    record = server.open_job("j", Script([[ToolCall("c1", "read", {"path": "/x"})]]))
    _, events = post(server, "j", {"messages": history(), "tools": TOOLS})
    assert finish(events) == "stop"
    assert any("has no parameter path" in e and "filePath" in e for e in record.errors)
    assert any("requires filePath" in e for e in record.errors)


def test_tool_not_offered_is_an_error(server: ModelServer) -> None:
    record = server.open_job("j", Script([[ToolCall("c1", "bash", {"command": "true"})]]))
    post(server, "j", {"messages": history(), "tools": TOOLS})
    assert any("'bash' is not offered" in e for e in record.errors)


def test_missing_result_is_an_error(server: ModelServer) -> None:
    """The job asking for more without sending a result back is recorded: the probe did not run."""
    record = server.open_job("j", Script([[ToolCall("c1", "read", {"filePath": "/x"})]]))
    messages = history()
    messages.append({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {}}]})
    post(server, "j", {"messages": messages, "tools": TOOLS})
    assert any("no tool result came back for c1" in e for e in record.errors)


def test_unknown_job_is_refused_and_recorded(server: ModelServer) -> None:
    status, _ = post(server, "nobody", {"messages": []})
    assert status == 404
    assert server.stray == ["POST /jobs/nobody/v1/chat/completions"]


def test_jobs_are_routed_apart(server: ModelServer) -> None:
    a = server.open_job("a", Script([[ToolCall("a1", "read", {"filePath": "/a"})]]))
    b = server.open_job("b", Script([[ToolCall("b1", "read", {"filePath": "/b"})]]))
    _, events = post(server, "b", {"messages": history(), "tools": TOOLS})
    assert [c["id"] for c in tool_calls(events)] == ["b1"]
    assert a.requests == 0 and b.requests == 1


def test_a_job_name_is_registered_once(server: ModelServer) -> None:
    server.open_job("j", Script())
    with pytest.raises(ValueError, match="already registered"):
        server.open_job("j", Script())


def test_a_body_that_is_not_a_json_object_is_an_error(server: ModelServer) -> None:
    record = server.open_job("j", Script())
    connection = UnixConnection(server.socket_path)
    connection.request("POST", "/jobs/j/v1/chat/completions", "[1, 2]", {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    connection.close()
    assert response.status == 400 and any("not a JSON object" in e for e in record.errors)


def test_the_reach_clients_get_of_the_model_bridge_is_no_stray_request(server: ModelServer) -> None:
    """A runner that binds the model's bridge into a container as a socket: the reach client finds it and sends
    its GET. It is the model, which a job may reach: recorded as the client's, never stray; any other GET is."""
    from boundary.model.server import PROBE_HEADER
    from boundary.reach import client

    assert client.PROBE_HEADER == PROBE_HEADER
    answer = client.http_stream(socket.AF_UNIX, str(server.socket_path), "localhost")
    assert answer.startswith("answered") and "404" in answer
    assert server.probes == ["GET /"] and server.stray == []
    connection = UnixConnection(server.socket_path)
    connection.request("GET", "/")
    connection.getresponse().read()
    assert server.stray == ["GET /"]
