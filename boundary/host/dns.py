"""DNS probes: the canary name through the system resolver, and straight at the stub resolver."""

from __future__ import annotations

import socket

import dns.message
import dns.query
import dns.rdatatype

from boundary.host.base import CANARY_NAME

STUB = "127.0.0.53"
TIMEOUT_S = 2.0


def resolve_system() -> list[str]:
    """Through the system resolver (/etc/resolv.conf, nsswitch), as any program would."""
    return sorted({str(info[4][0]) for info in socket.getaddrinfo(CANARY_NAME, None, socket.AF_INET)})


def resolve_stub() -> list[str]:
    """Straight at the stub resolver; the socket is connected so a dead stub fails at once."""
    query = dns.message.make_query(CANARY_NAME, dns.rdatatype.A)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect((STUB, 53))
        answer = dns.query.udp(query, STUB, timeout=TIMEOUT_S, sock=sock)
    return sorted(item.address for rrset in answer.answer for item in rrset)
