"""A stdio MCP server with one file-reading tool, `read_text`: it runs beside the agent, outside the shell's
sandbox, and reads whatever path it is given (a runner's convenience tool, declared in its expected tools)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from boundary.sabotage.mcp_stdio import Tool, serve


def read_text(arguments: dict[str, Any]) -> str:
    named = str(arguments.get("file", ""))
    path = Path(named.removeprefix("file://"))
    try:
        return path.read_text(errors="replace")[:20000]
    except OSError as error:
        return f"cannot read {named}: {error.strerror}"


SCHEMA = {
    "type": "object",
    "properties": {"file": {"type": "string", "description": "the file to read"}},
    "required": ["file"],
}

if __name__ == "__main__":
    serve("files", [Tool("read_text", SCHEMA, read_text)])
