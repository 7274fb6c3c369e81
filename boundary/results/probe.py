"""One probe's result: a cell (target, channel) of one scenario, unit by unit, with its verdict and the layer."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ProbeResult:
    scenario: str
    agent: str
    sandbox: str
    runner: str
    target: str
    channel: str
    verdict: str
    layer: str
    detail: str
    duration_s: float | None
    proof: str = ""  # what a DENIED rests on (`boundary.verdict.Proof`); empty for every other verdict

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
