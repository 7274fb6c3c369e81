"""The offered-tools check: the tools the model was actually sent, against the runner's expected set."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass


@dataclass(frozen=True)
class OfferedTools:
    expected: frozenset[str]
    offered: frozenset[str]
    forbidden_patterns: tuple[str, ...]

    @property
    def added(self) -> list[str]:
        return sorted(self.offered - self.expected)

    @property
    def missing(self) -> list[str]:
        return sorted(self.expected - self.offered)

    @property
    def forbidden(self) -> list[str]:
        return sorted(t for t in self.offered if any(fnmatch.fnmatchcase(t, p) for p in self.forbidden_patterns))

    @property
    def passed(self) -> bool:
        return bool(self.offered) and not (self.added or self.missing or self.forbidden)

    def explain(self) -> str:
        if not self.offered:
            return "no request with tools reached the model server: nothing to check (INCONCLUSIVE)"
        parts = []
        if self.forbidden:
            parts.append(f"forbidden ({', '.join(self.forbidden_patterns)}): {', '.join(self.forbidden)}")
        if self.added:
            parts.append(f"added: {', '.join(self.added)}")
        if self.missing:
            parts.append(f"missing: {', '.join(self.missing)}")
        if not parts:
            return f"exactly the expected {len(self.expected)} tools"
        return "; ".join(parts) + " — review the agent upgrade, then update the runner's expected set"

    def as_dict(self) -> dict[str, object]:
        return {
            "passed": self.passed,
            "expected": sorted(self.expected),
            "offered": sorted(self.offered),
            "added": self.added,
            "missing": self.missing,
            "forbidden": self.forbidden,
        }
