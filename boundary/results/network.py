"""What a job reached on the network, as a trace or a packet capture saw it: the scripted model only, or more."""

from __future__ import annotations

from dataclasses import dataclass, field

BRIDGE_PORT = 4010  # where a job reaches the scripted model: the bridge in its network namespace (jobs/netns.py)
MODEL = f"127.0.0.1:{BRIDGE_PORT}"


@dataclass(frozen=True)
class NetworkUse:
    inet: frozenset[str]  # host:port destinations
    unix: frozenset[str]  # socket paths (local IPC, listed for the record)
    problem: str | None = None  # why the trace could not be read; None: it was read
    # (destination, the program that reached for it), for the record
    by: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    observed_by: str = field(default="trace", kw_only=True)  # "trace" (strace -f) or "packets" (packets.py)

    @property
    def foreign(self) -> list[str]:
        return sorted(self.inet - {MODEL})

    @property
    def unproven(self) -> str | None:
        """Why this trace proves nothing about the job's network use; None when it does."""
        if self.problem:
            return self.problem
        if MODEL not in self.inet:
            if self.observed_by == "packets":
                return "the packet capture shows no connection to the scripted model, so it proves nothing"
            return (
                "the trace shows no connection to the scripted model, so it proves nothing: the agent never reached "
                "the model (did it start? a job's own tamper can break its restart: see its transcript), or strace "
                "did not follow it"
            )
        return None

    @property
    def clean(self) -> bool:
        return not self.foreign and self.unproven is None

    def explain(self) -> str:
        if self.foreign:  # a foreign peer is a finding even in a trace that is otherwise broken
            return f"reached beyond the scripted model: {', '.join(self._named(self.foreign))}"
        reason = self.unproven
        if reason:
            return f"INCONCLUSIVE: {reason}"
        if self.observed_by == "packets":
            return "the scripted model only (seen by a packet capture in the job's namespace)"
        return f"the scripted model only; unix sockets: {', '.join(sorted(self.unix)) or 'none'}"

    def _named(self, destinations: list[str]) -> list[str]:
        programs = dict(self.by)
        return [f"{d} (by {programs[d]})" if d in programs else d for d in destinations]
