"""Short, one-line excerpts of what a program or a job said, for verdict details and error messages."""

from __future__ import annotations

import re

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # a terminal's colours, in what an agent printed


def plain(text: str) -> str:
    """`text` without a terminal's colour codes."""
    return ANSI.sub("", text)


def excerpt(text: str, limit: int = 160) -> str:
    """`text` on one line (runs of white space become one space), cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
