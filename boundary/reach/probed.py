"""What a reach job's network watch saw that the scenario itself had it probe (the served canaries, its own
listener, its sandbox's proxy), set aside from what would be a reach beyond the model."""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import re
from dataclasses import dataclass

from boundary.reach.places import OWN_PORT, PUBLIC, Place
from boundary.results import NetworkUse

EPHEMERAL_PORTS = 32768  # Linux's default ip_local_port_range starts here: where a listener bound to port 0 lands
# A listener either listing tried (the client's `found:tcp:…`, the shell's programs' `shell:<program>:found:tcp:…`),
# or the proxy the client saw named.
LOOPBACK_SEEN = re.compile(
    r"^REACH (?:(?:shell:(?:bash|curl|node):)?found:tcp:(\S+):(\d+)"
    r"|env:proxy named [a-z0-9]+://(?:[^@/\s]*@)?([^/:\s]+):(\d+))",
    re.MULTILINE,
)


@dataclass(frozen=True)
class ProbedNetwork(NetworkUse):
    """A reach job's network use: its probes of the canaries in its own namespace are the scenario's to judge, not
    a reach beyond it. Set aside: the exact destinations the harness served, the loopback listeners and proxy the
    client reported in its own view, and loopback ports in the ephemeral range — in the jobs' loopback-only
    namespace nothing but the job's own processes listens there (its sandbox's filtering proxy, which the client's
    request through it makes the sandbox dial). Anything else (a resolver on port 53, any other address) is foreign
    as for every job."""

    probed: frozenset[str] = frozenset()

    @property
    def foreign(self) -> list[str]:
        return [d for d in super().foreign if d not in self.probed and not _own_ephemeral(d)]

    def explain(self) -> str:
        said = super().explain()
        reached = sorted(d for d in self.inet if d in self.probed or _own_ephemeral(d))
        return (
            f"{said}; its probes of the reach canaries in its own namespace: {', '.join(reached)}" if reached else said
        )


def _own_ephemeral(destination: str) -> bool:
    host, _, port = destination.rpartition(":")
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback and int(port) >= EPHEMERAL_PORTS
    except ValueError:
        return False


def set_aside(network: NetworkUse | None, probed: frozenset[str]) -> NetworkUse | None:
    if network is None:
        return None
    kept = {f.name: getattr(network, f.name) for f in dataclasses.fields(network)}
    return ProbedNetwork(**kept, probed=probed)


def probed_destinations(targets: list[Place], said: str) -> frozenset[str]:
    """The host:port destinations a reach job was scripted to try: the served TCP places, the public place, its
    own listener, and the loopback listeners and proxy its client reported seeing."""
    found = {f"{p.address}:{p.port}" for p in targets if p.kind == "tcp"} | {f"{PUBLIC}:80", f"127.0.0.1:{OWN_PORT}"}
    for tcp_host, tcp_port, proxy_host, proxy_port in LOOPBACK_SEEN.findall(said):
        host, port = (tcp_host, tcp_port) if tcp_host else (proxy_host, proxy_port)
        for address in ("127.0.0.1", "::1") if host in ("localhost", "0.0.0.0", "::") else (host,):
            with contextlib.suppress(ValueError):
                if ipaddress.ip_address(address).is_loopback:
                    found.add(f"[{address}]:{port}" if ":" in address else f"{address}:{port}")
    return frozenset(found)
