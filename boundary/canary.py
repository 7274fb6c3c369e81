"""Canaries: fresh random tokens planted in targets, and the search for them."""

from __future__ import annotations

import secrets
from collections.abc import Iterable

PREFIX = "BOUNDARY-"
PATTERN = PREFIX + "[0-9a-f]{20}"  # a regex matching every canary, for grep probes


def new_canary() -> str:
    return PREFIX + secrets.token_hex(10)


def found(tokens: Iterable[str], text: str, supplied: str = "") -> list[str]:
    """The tokens in `text`, except those the prober itself supplied (e.g. in a path it named)."""
    return [token for token in tokens if token in text and token not in supplied]


def revealed(tokens: Iterable[str], text: str, typed: Iterable[str]) -> list[str]:
    """The tokens in `text` outside every echo of what the prober typed: a token inside a path it named is
    not found by echoing that path, but the same token elsewhere in the answer (a file listed) is."""
    for echo in sorted({t for t in typed if t}, key=len, reverse=True):  # the longest first: a path before its parts
        text = text.replace(echo, "\0")
    return [token for token in tokens if token in text]
