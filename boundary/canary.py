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
