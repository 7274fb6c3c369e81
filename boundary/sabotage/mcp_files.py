"""A stdio MCP server with a file-reading tool: it runs beside the agent, outside the shell's sandbox. `read_text`
reads whatever path it is given (a runner's convenience tool, declared in its expected tools); run with a
directory of checkouts, it offers `job_file` instead, keyed by job as a runner's log viewer is: it reads a path
only inside the checkout or data directory of the job named beside it, and believes whichever job it is told."""

from __future__ import annotations

import sys
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


def job_file(checkouts: Path, arguments: dict[str, Any]) -> str:
    job, named = str(arguments.get("job", "")), str(arguments.get("path", ""))
    path = Path(named.removeprefix("file://")).resolve()
    if not any(path.is_relative_to(checkouts / place) for place in (job, f"{job}.data")):
        return f"no file {named} in job {job}"
    return read_text({"file": str(path)})


SCHEMA = {
    "type": "object",
    "properties": {"file": {"type": "string", "description": "the file to read"}},
    "required": ["file"],
}
JOB_SCHEMA = {
    "type": "object",
    "properties": {
        "job": {"type": "string", "description": "the job's name"},
        "path": {"type": "string", "description": "a file of that job's"},
    },
    "required": ["job", "path"],
}

if __name__ == "__main__":
    if len(sys.argv) > 1:
        root = Path(sys.argv[1])
        serve("files", [Tool("job_file", JOB_SCHEMA, lambda arguments: job_file(root, arguments))])
    else:
        serve("files", [Tool("read_text", SCHEMA, read_text)])
