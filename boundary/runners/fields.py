"""One answer of a runner's, read field by field with the type each must have; every mistake a ProtocolError that
names the verb and the field (protocol.py reads each verb's answer with it)."""

from __future__ import annotations

import json
import os.path
from pathlib import Path
from typing import Any


class ProtocolError(RuntimeError):
    """A runner's answer broke the protocol; the message names the verb and the field."""


class Fields:
    """One answer's fields, each read with its expected type."""

    def __init__(self, verb: str, stdout: str) -> None:
        self.verb = verb
        try:
            answer = json.loads(stdout)
        except json.JSONDecodeError as error:
            raise self.error(
                f"expected one JSON object on stdout, got malformed JSON ({error}): {stdout[:200]!r}"
            ) from None
        if not isinstance(answer, dict):
            raise self.error(f"expected one JSON object on stdout, got {type(answer).__name__}: {stdout[:200]!r}")
        self.answer: dict[str, Any] = answer

    def error(self, text: str, key: str | None = None) -> ProtocolError:
        return ProtocolError(f"runner {self.verb}: {f'field {key!r}: ' if key else ''}{text}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.answer or (self.answer[key] is None and default is not ...):
            if default is ...:
                raise self.error("missing", key)
            return default
        value = self.answer[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
            raise self.error(f"expected {names}, got {type(value).__name__} {value!r:.80}", key)
        return value

    def string(self, key: str) -> str:
        value = str(self.get(key, str))
        if not value.strip():
            raise self.error("expected a non-empty string", key)
        return value

    def optional_string(self, key: str) -> str | None:
        return None if self.answer.get(key) is None else self.string(key)

    def strings(self, key: str, default: list[str] | None = None, nonempty: bool = False) -> list[str]:
        values = self.get(key, list, ... if default is None else default)
        if not all(isinstance(value, str) for value in values):
            raise self.error(f"expected a list of strings, got {values!r:.120}", key)
        if nonempty and not values:
            raise self.error("expected at least one entry", key)
        return list(values)

    def path(self, key: str, state: Path) -> Path:
        """An absolute path inside the runner's state directory."""
        return inside(self, key, self.string(key), state)

    def optional_path(self, key: str, state: Path) -> Path | None:
        value = self.optional_string(key)
        return None if value is None else inside(self, key, value, state)


def inside(fields: Fields, key: str, value: str, state: Path) -> Path:
    path = Path(value)
    if not path.is_absolute():
        raise fields.error(f"expected an absolute path, got {value!r}", key)
    if not Path(os.path.normpath(path)).is_relative_to(os.path.normpath(state)):  # no way out through `..`
        raise fields.error(f"expected a path inside the state directory {state}, got {value}", key)
    return path
