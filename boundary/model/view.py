"""How a job sees the host's paths, when its runner binds them elsewhere inside its container or VM.

A runner may answer `paths_inside` in `create-job`: each host directory it binds into the job, and where the job
sees it (`{"/…/state/checkouts/job-a": "/workspace"}`). The harness keeps thinking in host paths: it plants,
reads and judges there. Only what crosses into the job is translated, at the one place it crosses — the scripted
model's tool calls, on their way out (their arguments, and the base64 payloads and computed paths in their shell
commands) — and what comes back (tool results) is translated back. A path the map does not cover is named as
it is: the host's path, which is what an attacker inside would try.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import os.path
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from boundary.model.script import ToolCall

# A path is a whole path where it starts and ends: not inside a longer name (`…/job-a` is not `…/job-a.data`).
_PATH_CHAR = r"[\w.+-]"
# What the harness's shell commands carry encoded (boundary.writes.shell, boundary.probes, the reach client):
# `printf %s BASE64 | base64 -d`, gzip'd first where that is shorter, a feeding command's errors thrown away.
_BLOB = re.compile(r"printf %s ([A-Za-z0-9+/=]+) (?:2>/dev/null )?\| base64 -d(?: (?:2>/dev/null )?\| gzip -dc)?")


@dataclass(frozen=True)
class PathView:
    """(host directory, where the job sees it) pairs; none: the job sees every path where the host does."""

    binds: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, binds: Iterable[tuple[str, str]]) -> PathView:
        pairs = {os.path.normpath(host): os.path.normpath(inside) for host, inside in binds}
        return cls(tuple((host, inside) for host, inside in pairs.items() if host != inside))

    def __bool__(self) -> bool:
        return bool(self.binds)

    def inward(self, text: str) -> str:
        """`text` as the job must be told it: each host directory (and what is below it) where the job sees it."""
        if not self.binds:
            return text
        text = _BLOB.sub(self._blob_inward, text)
        return _substitute(text, self.binds)

    def outward(self, text: str) -> str:
        """`text` the job wrote, with its paths where the host has them."""
        return _substitute(text, tuple((inside, host) for host, inside in self.binds)) if self.binds else text

    def call(self, call: ToolCall) -> ToolCall:
        return replace(call, args=self._args_inward(call.args)) if self.binds else call

    def _args_inward(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.inward(value)
        if isinstance(value, dict):
            return {key: self._args_inward(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._args_inward(item) for item in value]
        return value

    def _blob_inward(self, match: re.Match[str]) -> str:
        encoded, gzipped = match.group(1), match.group(0).endswith("gzip -dc")
        try:
            data = base64.b64decode(encoded, validate=True)
            text = (gzip.decompress(data) if gzipped else data).decode()
        except (binascii.Error, OSError, EOFError, UnicodeDecodeError):
            return match.group(0)  # not one of the harness's own: left as it is
        seen = _substitute(text, self.binds).encode()
        if gzipped:
            seen = gzip.compress(seen, mtime=0)
        return match.group(0).replace(encoded, base64.b64encode(seen).decode(), 1)


def _substitute(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """Each `from` path (longest first, so a bind inside another wins) replaced by its `to`, where it is a whole
    path or the start of one."""
    ordered = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)
    pattern = "|".join(re.escape(source) for source, _ in ordered)
    found = re.compile(rf"(?<!{_PATH_CHAR})({pattern})(?!{_PATH_CHAR})")
    target = dict(ordered)
    return found.sub(lambda match: target[match.group(1)], text)
