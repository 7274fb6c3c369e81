"""The `shell_discovered` cells: what the Python client's listing and the shell's own (`boundary/reach/listing.py`)
found and tried, in one shell call.

Where the Python client is stopped (an interpreter guard), the shell's listing answers alone; where both ran, a place
either one listed counts as listed, and every try at it counts (fail closed). Each listing that began must end and be
whole: one cut short, or that stopped half-way, proves nothing by what it did not print. A place none listed is out
of the job's view only where a whole listing showed the job's own listener of that kind."""

from __future__ import annotations

from boundary.reach import programs
from boundary.reach.judge import OS_LAYER, Attempt, Control, control_of, judge_attempts
from boundary.reach.listing import Listing, listings, tried_by, where
from boundary.reach.places import Place
from boundary.verdict import Finding, Proof, Verdict, denied, denied_all

PYTHON = "the Python client"


def judge_discovered(
    place: Place, attempts: list[Attempt], result: str, own: str, denials: dict[str, tuple[str, ...]]
) -> Finding:
    """The cell's verdict, no canary having come back (`denials`: the layers a program's own words may name)."""
    ran = [listing for listing in listings(attempts, result) if listing.started]
    if not ran:
        return _inconclusive("no listing ran: the client never ran discovery, and the shell printed no listing")
    unwhole = [_unwhole(listing) for listing in ran if not listing.ended or listing.cut]
    if unwhole:
        return _inconclusive("; ".join(unwhole))
    kind = "tcp" if place.kind == "tcp" else "unix"
    controls = {listing.who: control_of(listing.own[kind], own) for listing in ran}
    mine = relevant(place, attempts)
    if mine:
        return _tried(place, mine, controls, denials)
    return _unlisted(place, attempts, ran, controls)


def relevant(place: Place, attempts: list[Attempt]) -> list[Attempt]:
    """Every listing's lines about this place (any bus that answered `Hello` counts for the system bus)."""
    if place.kind == "dbus":
        found = [(a, at) for a in attempts if (at := where(a.label))]
        return [a for a, at in found if at == f"found:unix:{place.address}" or a.detail.startswith("dbus-hello")]
    if place.kind == "tcp":
        labels = {f"found:tcp:{address}:{place.port}" for address in (place.address, "0.0.0.0", "::")}
    else:
        labels = {f"found:unix:{place.address}"}
    return [a for a in attempts if where(a.label) in labels]


def no_socket(attempts: list[Attempt], control: Control) -> Finding | None:
    """A program that made no socket and says not why (curl) is held by the OS layer only where that layer closed
    the whole kind to the job's shell: a control of that kind, in the same call, was refused a socket."""
    silent = [a for a in attempts if a.detail.startswith(f"socket {programs.NO_REASON}")]
    if not silent or len(silent) < len(attempts) or control.closed_by != OS_LAYER:
        return None
    labels = ", ".join(a.label for a in silent)
    return denied(Proof.REFUSED, OS_LAYER, f"{labels}: no socket made (no reason given), as {control.why}")


def _unwhole(listing: Listing) -> str:
    if listing.cut:
        return f"{listing.who}'s discovery did not try everything it listed: {listing.cut}"
    return f"{listing.who} did not finish its discovery: what it did not print proves nothing"


def _tried(
    place: Place, mine: list[Attempt], controls: dict[str, Control], denials: dict[str, tuple[str, ...]]
) -> Finding:
    """Each program's tries at the place judged with its control; DENIED only where every one's is."""
    groups: dict[str, list[Attempt]] = {}
    for attempt in mine:
        if attempt.outcome != "named":  # listed, but nothing here to try it with
            groups.setdefault(tried_by(attempt.label), []).append(attempt)
    if not groups:
        said = "; ".join(a.text for a in mine)
        return _inconclusive(f"{place.address} was listed, and no program here could try it ({said})")
    # The shell's programs ran in the Python client's view: either listing's own listener shows that view.
    shell = _either(controls.get("the shell"), controls.get(PYTHON))
    findings = []
    for who, tries in groups.items():
        control = controls.get(PYTHON, _never) if who == "python" else shell
        findings.append(no_socket(tries, control) or judge_attempts(tries, control, denials))
    failed = next((f for f in findings if f.verdict is not Verdict.DENIED), None)
    if failed is not None or len(findings) == 1:
        return failed or findings[0]
    layers = {f.layer for f in findings}
    layer = layers.pop() if len(layers) == 1 else OS_LAYER if OS_LAYER in layers else sorted(layers)[0]
    return denied_all(findings, layer, "; ".join(f.detail for f in findings))


def _unlisted(place: Place, attempts: list[Attempt], ran: list[Listing], controls: dict[str, Control]) -> Finding:
    held = [(listing.who, controls[listing.who]) for listing in ran]
    held = [(who, c) for who, c in held if c.ok or c.closed_by == OS_LAYER]
    if not held:
        why = "; ".join(f"{listing.who}: {controls[listing.who].why}" for listing in ran)
        return _inconclusive(f"{place.address} was not listed, and {why}")
    seen = len({at for a in attempts if (at := where(a.label))})
    how = "; ".join(f"{who}'s own listener of that kind was listed" if c.ok else f"{who}: {c.why}" for who, c in held)
    return denied(
        Proof.CONTROLLED,
        OS_LAYER,
        f"{place.address} is not in the job's view ({seen} sockets and listeners listed; {how})",
    )


def _either(*controls: Control | None) -> Control:
    """A view shown by any of the controls: one that got through, else one that found the kind closed."""
    present = [c for c in controls if c is not None]
    return (
        next((c for c in present if c.ok), None)
        or next((c for c in present if c.closed_by), None)
        or Control(False, why="; ".join(c.why for c in present) or "no listing's control ran")
    )


_never = Control(False, why="the Python client's discovery never ran")


def _inconclusive(why: str) -> Finding:
    return Finding(Verdict.INCONCLUSIVE, "", why)
