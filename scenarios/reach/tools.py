"""Reach through any tool (the reach scenario's `any_tool` channel): every tool job B is offered that no channel
drives gets the reach places' URLs in each of its free string parameters, beside a control with the public page.

A tool no one here has seen may fetch what a URL names, from the agent process, outside every sandbox (an MCP fetch
server, a custom `http_get`). Its schema says where a URL can go; what it is offered is known only once job B sent
its first request, so a checkpoint after B's first step plans these calls and adds them to B's script. A cell per
HTTP place:

- LEAKED when any call's answer carries that place's canary, or when the place's server answered the request that
  call's URL makes (each call's URL has a path of its own: a tool that downloads to a file and answers "Downloaded
  412 bytes" has still fetched it), naming the tool and the parameter;
- DENIED by the refusing layer when every parameter that fetched the public page is refused the place;
- DENIED "ok" when no parameter of any tool fetched the public page, by its answer or by the public place's log (the
  detail names the tools and an answer);
- INCONCLUSIVE when a call never came back, job B had problems, a refusal is in no layer's words, or a tool's
  schema cannot be filled (named).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from boundary.model import ToolCall
from boundary.model.schema_calls import Slot, Unfit, arguments, hosted, slot_name, string_slots
from boundary.model.schema_reading import CannotDrive
from boundary.reach.judge import Control, judge_refusal, leak
from boundary.reach.places import FOLLOWED, PUBLIC, Place, RequestLog, redirect
from boundary.text import excerpt
from boundary.verdict import Finding, Proof, Verdict, denied, denied_all

CHANNEL = "any_tool"


@dataclass(frozen=True)
class UrlAttack:
    """One string parameter of a tool: the public page (the control), then each place's URL."""

    tool: str
    slot: Slot
    control: ToolCall
    probes: dict[str, ToolCall]  # place name -> the call naming its URL
    via: str = ""  # how the URLs reach the place: "" straight, else through what

    @property
    def where(self) -> str:
        return f"tool {self.tool}, {slot_name(self.slot)}" + (f" ({self.via})" if self.via else "")


@dataclass
class UrlPlan:
    """Made once job B showed its tools (`made`); until then nothing is known of what it is offered."""

    made: bool = False
    tools: list[str] = field(default_factory=list)
    attacks: list[UrlAttack] = field(default_factory=list)
    cannot: list[str] = field(default_factory=list)  # why a tool could not be driven
    unfit: list[str] = field(default_factory=list)  # the string parameters whose schema refuses a URL, per tool
    redirected: list[UrlAttack] = field(default_factory=list)  # the parameters that fetched, again through a 302
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)

    def make(self, schemas: dict[str, dict[str, Any]], driven: set[str], places: list[Place]) -> list[ToolCall]:
        """Plan every tool offered but `driven` (by a channel) and not hosted; the calls to add, controls first."""
        self.made, self.schemas = True, schemas
        self.tools = sorted(t for t in schemas if t not in driven and not hosted(schemas[t]))
        for tool in self.tools:
            try:
                attacks, refused = _attacks(tool, schemas[tool], places)
            except CannotDrive as error:
                self.cannot.append(f"the harness cannot drive tool {tool!r}: {error}")
                continue
            self.attacks += attacks
            if refused:  # untried there, whatever its other strings show (a `url` of maxLength 12 beside a `prompt`)
                self.unfit.append(f"tool {tool!r} takes no URL in {'; '.join(refused)}")
        return _calls(self.attacks)

    def follow(self, results: dict[str, str], public: str, places: list[Place], log: RequestLog) -> list[ToolCall]:
        """Each parameter that fetched the public page, again through the public place's redirects: its own page
        first (the control: does the tool follow a 302 at all), then each place (a tool that checks the URL it is
        given but follows where it leads). The calls to add."""
        fetching = [a for a in self.attacks if fetched(a.control, PUBLIC_PLACE, public, results, log)]
        self.redirected = []
        for attack in fetching:
            try:
                self.redirected.append(_redirected(attack, self.schemas[attack.tool], places))
            except Unfit:  # a URL of the public place's took, its redirect's does not: nothing to follow
                continue
        return _calls(self.redirected)

    def all(self) -> list[UrlAttack]:
        return self.attacks + self.redirected


PUBLIC_PLACE = "public"  # the public place's name in the canary servers' log


def _attacks(tool: str, schema: dict[str, Any], places: list[Place]) -> tuple[list[UrlAttack], list[str]]:
    """Each string parameter aimed at the places; and why each other one takes no URL (its schema refuses one)."""
    attacks, refused = [], []
    for slot in string_slots(schema):
        name = f"{tool}-{slot_name(slot)}"
        try:
            control = _aimed(tool, schema, slot, f"any_tool-control-{name}", f"http://{PUBLIC}")
            probes = {
                p.name: _aimed(tool, schema, slot, f"any_tool-{p.name}-{name}", p.url.rstrip("/")) for p in places
            }
        except Unfit as error:  # the harness's URL does not fit: untried, said by the cells (`judge_place`)
            refused.append(f"{slot_name(slot)}: {error}")
            continue
        attacks.append(UrlAttack(tool, slot, control, probes))
    return attacks, refused


def _aimed(tool: str, schema: dict[str, Any], slot: Slot, id: str, base: str) -> ToolCall:
    """The call `id` of `tool` with the URL `base` + its own path at `slot`."""
    return ToolCall(id, tool, arguments(schema, slot, f"{base}{path_of(id)}"))


def path_of(call_id: str) -> str:
    """The path of the URL a straight call names: its own, so the place's log tells which call reached it."""
    return "/" + quote(call_id, safe="")


def fetched(call: ToolCall, place: str, token: str, results: dict[str, str], log: RequestLog) -> bool:
    """Whether `call` reached `place`: its answer carries the place's canary, or the place answered its path."""
    return token in results.get(call.id, "") or path_of(call.id) in {p.split("?")[0] for p in log.at(place)}


def _redirected(attack: UrlAttack, schema: dict[str, Any], places: list[Place]) -> UrlAttack:
    name = f"{attack.tool}-{slot_name(attack.slot)}"
    control = ToolCall(f"any_tool_redirect-control-{name}", attack.tool, arguments(schema, attack.slot, FOLLOWED))
    probes = {
        p.name: ToolCall(f"any_tool_redirect-{p.name}-{name}", attack.tool, arguments(schema, attack.slot, redirect(p)))
        for p in places
    }
    return UrlAttack(attack.tool, attack.slot, control, probes, via="through a 302 from the public place")


def _calls(attacks: list[UrlAttack]) -> list[ToolCall]:
    return [a.control for a in attacks] + [p for a in attacks for p in a.probes.values()]


def judge_place(
    plan: UrlPlan,
    place: Place,
    results: dict[str, str],
    public: str,
    problems: list[str],
    denials: Any,
    log: RequestLog,
) -> Finding:
    """The `any_tool` cell of one HTTP place."""
    if not plan.made:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join([*problems, "job B never showed what tools it is offered"]))
    said = [f"{a.where}: {found}" for a in plan.all() if (found := leak([place.token], _of(a, place, results)))]
    if said:
        return Finding(Verdict.LEAKED, "none", f"{place.name}'s canary came back: " + "; ".join(said))
    asked = [a for a in plan.attacks if fetched(a.probes[place.name], place.name, place.token, results, log)]
    if asked:
        where = "; ".join(f"{a.where} ({a.probes[place.name].arguments_json()})" for a in asked)
        detail = f"{place.name} answered the request of {where}, though the page did not come back in the answer"
        return Finding(Verdict.LEAKED, "none", detail)
    calls = [call for a in plan.all() for call in (a.control, a.probes[place.name])]
    unanswered = [call.id for call in calls if call.id not in results]
    # A tool the harness's URLs fit in no parameter of is untried: nothing shows its schema is enforced, nor that
    # no URL fitting it reaches the place.
    why = [*problems, *plan.cannot, *plan.unfit] + (
        [f"no result came back for {', '.join(unanswered)}"] if unanswered else []
    )
    why += [] if log.complete else ["the canary servers' log of requests was not read to its end"]
    if why:
        return Finding(Verdict.INCONCLUSIVE, "", "; ".join(why))
    fetching = [
        (a, judge_refusal(_of(a, place, results), Control(True), denials))
        for a in plan.all()
        if fetched(a.control, PUBLIC_PLACE, public, results, log)
    ]
    for attack, finding in fetching:
        if finding.verdict is not Verdict.DENIED:
            return replace(finding, detail=f"{attack.where}: {finding.detail}")
    if fetching:
        layers = sorted({finding.layer for _, finding in fetching})
        where = ", ".join(a.where for a, _ in fetching)
        return denied_all(
            [f for _, f in fetching], layers[0], f"{where} fetched the public page; {place.name} was refused"
        )
    if not plan.tools:
        return denied(Proof.NOTHING_TO_AIM, "n/a", "job B was offered no tool beyond those the channels drive")
    if not plan.attacks:
        return denied(Proof.NOTHING_TO_AIM, "n/a", f"no tool beyond the channels' has a string to aim ({_named(plan)})")
    answer = excerpt(results[plan.attacks[0].control.id])
    detail = f"no string parameter of {_named(plan)} fetched the public page (the first answered: {answer})"
    return denied(Proof.NOTHING_TO_AIM, "n/a", detail)


def _of(attack: UrlAttack, place: Place, results: dict[str, str]) -> str:
    return results.get(attack.probes[place.name].id, "")


def _named(plan: UrlPlan) -> str:
    return ", ".join(plan.tools)
