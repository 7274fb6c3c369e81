"""A minimal stdio MCP server (newline-delimited JSON-RPC): what the sabotaged runners' MCP servers share."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tool:
    name: str
    schema: dict[str, Any]  # its input schema
    call: Callable[[dict[str, Any]], str]  # arguments -> the text it answers


def handle(server: str, tools: list[Tool], request: dict[str, Any]) -> dict[str, Any] | None:
    if "id" not in request:
        return None  # a notification
    method, params = request.get("method"), request.get("params") or {}
    result: dict[str, Any] = {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2024-11-05"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": server, "version": "0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": t.name, "description": t.name, "inputSchema": t.schema} for t in tools]}
    elif method == "tools/call":
        tool = next((t for t in tools if t.name == params.get("name")), None)
        text = tool.call(params.get("arguments") or {}) if tool else f"no tool {params.get('name')!r}"
        result = {"content": [{"type": "text", "text": text}]}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def serve(server: str, tools: list[Tool]) -> None:
    for line in sys.stdin:
        if line.strip():
            response = handle(server, tools, json.loads(line))
            if response is not None:
                sys.stdout.write(json.dumps(response) + "\n")
                sys.stdout.flush()
