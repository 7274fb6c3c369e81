"""Short, one-line excerpts of what a program or a job said, for verdict details and error messages."""

from __future__ import annotations


def excerpt(text: str, limit: int = 160) -> str:
    """`text` on one line (runs of white space become one space), cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
