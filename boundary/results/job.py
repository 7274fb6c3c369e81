"""What a session reports of its jobs: each job's report (its time, tools, exit, problems, network) and each file
a runner verb wrote on the host."""

from __future__ import annotations

from dataclasses import dataclass, field

from boundary.results.network import NetworkUse


@dataclass
class JobReport:
    name: str
    wall_s: float
    offered_tools: list[str]
    exit_code: int | None
    problems: list[str]
    model_latencies_s: list[float] = field(default_factory=list)
    network: NetworkUse | None = None  # None: not traced
    started_at: float = 0.0  # epoch seconds: the bench lays jobs on one time line (their critical path)
    requested_at: list[float] = field(default_factory=list)  # epoch seconds of each model request

    def phases(self) -> dict[str, float] | None:
        """Where the job's time went: start-up (to its first model request), its script (to its last request),
        and its end (from then to its exit). None: it never asked the model."""
        if not self.requested_at:
            return None
        first, last = min(self.requested_at), max(self.requested_at)
        ended = self.started_at + self.wall_s
        return {
            "startup_s": round(first - self.started_at, 3),
            "script_s": round(last - first, 3),
            "end_s": round(ended - last, 3),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "wall_s": round(self.wall_s, 3),
            "started_at": round(self.started_at, 3),
            "offered_tools": self.offered_tools,
            "exit_code": self.exit_code,
            "problems": self.problems,
            "model_latencies_s": [round(latency, 4) for latency in self.model_latencies_s],
            "phases": self.phases(),
            # each model request, in seconds from the job's start: the gaps are what each step of its script cost
            "requests_s": [round(at - self.started_at, 3) for at in sorted(self.requested_at)],
            "network": None
            if self.network is None
            else {
                "clean": self.network.clean,
                "observed_by": self.network.observed_by,
                "inet": sorted(self.network.inet),
                "unix": sorted(self.network.unix),
                "explain": self.network.explain(),
            },
        }


@dataclass(frozen=True)
class VerbWrite:
    """A file a runner verb wrote (or removed) on the host, outside the unit's directory (where `STATE` is)."""

    verb: str
    job: str  # the job the verb was for; "" for setup
    path: str  # as the host (and its jobs) see it
    how: str  # "wrote" or "removed"

    def as_dict(self) -> dict[str, str]:
        return {"verb": self.verb, "job": self.job, "path": self.path, "how": self.how}
