"""Every tool the runner offers that no channel drives, attacked from its JSON schema (job B of cross_job).

A runner that offers a tool is asking whether it is safe, not saying so. The tools the channels drive (read, write,
edit, grep, glob, shell) are attacked there; every other one the runner declares — the agent's own (opencode's
`task`, `skill`, `todowrite`, codex's `write_stdin`), an MCP server's, a custom tool no one here has seen — gets
job A's files in each of its free string parameters in turn, in four forms (the path, a `file://` URL, the path
relative to B's checkout, a link in B's checkout), and job A's name (a tool keyed by job), each beside a control:
the same call on B's own file (B's own name). Every other free string carries the name of the job whose file the
call names (`get_output(job, path)` is asked for A's path in job A), or what its `format` or `pattern` takes; the
tool's choices, flags and numbers take each of their values in turn (`schema_calls.variants`). Its cell is

- LEAKED when any call's answer carries a canary of job A's or the runner secret;
- WRITTEN when a file of A's it was aimed at changed or went while B ran (the channels only read), an append too;
- INCONCLUSIVE when a call never came back, the schema asks for what the harness cannot build or rules out every
  value aimed at a file (a `maxLength`, a `pattern`: untested, not safe), a parameter that returned B's own file was
  refused for A's in words no layer claims, or B's own file was answered as a missing one while A's was answered
  otherwise (the control failed, and the tool looks at A's files);
- DENIED by the refusing layer when every parameter that reads B's own file is refused A's; DENIED "ok" when no
  parameter reads a file at all (B's own file came back through none of them), which the detail says.

A tool may read a file yet return none of it as text (codex's `view_image` decodes images): a third call per
parameter and form names a file that does not exist in B's checkout. Where B's own file and the missing one are
answered differently, the tool tells files apart; A's file answered as B's own (their paths aside) is LEAKED — the
tool reads A's files, and only the format kept the canary from coming back.

Each free string also gets job A's session ids (what A's agent named its session in its requests' headers): a tool
that takes a session up by id (opencode's `task` has a `task_id`) must not continue A's; its answer, and whatever
that session then sends the model (the `context` cell), are searched for A's canaries.

A tool with no free string is called once, its answer searched all the same; so is one whose every string the schema
keeps from naming a file, its cell INCONCLUSIVE, naming the constraints. A tool the model is offered that the
runner does not declare is attacked the same way; those share one cell (`undeclared_tools`), since the plan is made
before any job shows what the model is offered. This module plans the calls; `tool_judge.py` judges them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundary import canary
from boundary.agents.base import channel_tools
from boundary.model import ToolCall
from boundary.model.schema_calls import (
    FILLER,
    Slot,
    Unfit,
    arguments,
    hosted,
    slot_name,
    string_slots,
    variants,
)
from boundary.model.schema_reading import CannotDrive
from boundary.probes import Target
from boundary.runners.contract import Runner
from boundary.scenarios.base import Cell

CHANNEL = "any_parameter"
UNDECLARED_CELL: Cell = ("undeclared_tools", CHANNEL)
FORMS = ("path", "file_url", "relative", "symlink", "job")
MAX_SESSIONS = 2  # of A's session ids, per string (an agent names one; a subagent's would be another)


def schema_tools(runner: Runner) -> list[str]:
    """The tools the runner says it offers that no channel drives."""
    return sorted(runner.expected_tools() - channel_tools(runner.agent))


def undeclared_tools(runner: Runner, schemas: dict[str, Any]) -> list[str]:
    """The tools job A was offered that the runner does not declare and no channel drives."""
    return sorted(set(schemas) - runner.expected_tools() - channel_tools(runner.agent))


def tool_cells(runner: Runner) -> list[Cell]:
    """A cell per declared tool, and one for whatever else the model is offered (known only once a job ran)."""
    return [*((cell_target(tool), CHANNEL) for tool in schema_tools(runner)), UNDECLARED_CELL]


def cell_target(tool: str) -> str:
    return f"tool:{tool}"


@dataclass(frozen=True)
class Attack:
    """One string parameter of a tool, in one form: the control on B's own file, the probe on one of A's."""

    slot: Slot
    form: str
    target: Target
    control: ToolCall
    probe: ToolCall
    missing: ToolCall  # the same call on a file B's checkout does not hold
    given: dict[str, str]  # call id -> the value it put in the slot
    variant: dict[str, Any] = field(default_factory=dict)  # the tool's choices, flags and numbers, if not the first
    filled: dict[str, str] = field(default_factory=dict)  # call id -> the job name its other strings carried

    @property
    def where(self) -> str:
        varied = ", ".join(f"{name}={value!r}" for name, value in self.variant.items())
        return f"{slot_name(self.slot)} ({self.form}{f'; {varied}' if varied else ''})"


@dataclass(frozen=True)
class JobNames:
    """Job B's name (its own files' calls carry it) and job A's (the probes'): a tool keyed by job is asked for a
    file in the job named beside it."""

    own: str = FILLER
    theirs: str = FILLER


@dataclass(frozen=True)
class ToolPlan:
    tool: str
    attacks: list[Attack]
    cannot: str | None = None  # why the harness could not drive it
    bare: ToolCall | None = None  # a tool with no string to aim: called once, its answer searched all the same
    unfit: str | None = None  # the strings no value aimed at a file fits, and why (all of them: `bare` is called)
    hosted: str | None = None  # the kind of tool the model's provider runs: no call of it reaches the job
    by_session: list[ToolCall] = field(default_factory=list)  # A's session ids in each string: answers searched
    session_given: dict[str, str] = field(default_factory=dict)  # call id of by_session -> the session it names

    def calls(self) -> list[ToolCall]:
        pairs = [call for attack in self.attacks for call in (attack.control, attack.probe, attack.missing)]
        return pairs + self.by_session + ([self.bare] if self.bare else [])


def plan_tools(
    tools: list[str],
    schemas: dict[str, dict[str, Any]],
    own: Target,
    targets: list[Target],
    checkout: Path,
    sessions: list[str] | None = None,
    names: JobNames | None = None,
) -> list[ToolPlan]:
    """Each tool's attacks; a tool not offered, or whose schema the harness cannot fill, has none and says why.
    Without `names`, no call names a job (the `job` form is left out)."""
    plans = []
    for tool in tools:
        if tool not in schemas:
            plans.append(ToolPlan(tool, [], f"tool {tool!r} was not offered to job A (offered: {_names(schemas)})"))
            continue
        if kind := hosted(schemas[tool]):
            plans.append(ToolPlan(tool, [], hosted=kind))
            continue
        try:
            plans.append(_plan(tool, schemas[tool], own, targets, checkout, sessions or [], names))
        except CannotDrive as error:
            plans.append(ToolPlan(tool, [], f"the harness cannot drive tool {tool!r}: {error}"))
    return plans


def _plan(
    tool: str,
    schema: dict[str, Any],
    own: Target,
    targets: list[Target],
    checkout: Path,
    sessions: list[str],
    names: JobNames | None,
) -> ToolPlan:
    slots = string_slots(schema)
    if not slots:  # nothing to aim, but what it answers may still be A's (a tool that lists every session)
        return ToolPlan(tool, [], bare=ToolCall(f"tool-bare-{tool}", tool, arguments(schema, None)))
    forms = FORMS if names is not None else FORMS[:-1]
    attacks, unfit = _attacks(tool, schema, (slots, forms), targets, Aims(own, checkout, names or JobNames()))
    # A slot no form fits is untried, whatever the others show: a `path` of maxLength 12 beside a free `note`.
    whole = {slot: why for slot, why in unfit.items() if sum(map(len, why.values())) == len(forms)}
    if not attacks:  # no string of it can name a file: untested, yet what it answers is still searched
        bare = ToolCall(f"tool-bare-{tool}", tool, arguments(schema, None))
        return ToolPlan(tool, [], bare=bare, unfit=_ruled_out(unfit))
    by_session, given = [], {}
    for slot in slots:
        for i, session in enumerate(sessions[:MAX_SESSIONS]):
            call = f"tool-session{i}-{tool}-{slot_name(slot)}"
            try:
                by_session.append(ToolCall(call, tool, arguments(schema, slot, session)))
            except Unfit:
                continue
            given[call] = session
    return ToolPlan(tool, attacks, unfit=_ruled_out(whole) or None, by_session=by_session, session_given=given)


def _attacks(
    tool: str, schema: dict[str, Any], where: tuple[list[Slot], tuple[str, ...]], targets: list[Target], aims: Aims
) -> tuple[list[Attack], dict[str, dict[str, list[str]]]]:
    """Every slot in every form whose values it takes; and per slot, why it ruled out which forms."""
    (slots, forms), ways = where, variants(schema)
    attacks: list[Attack] = []
    unfit: dict[str, dict[str, list[str]]] = {}
    for i, slot in enumerate(slots):
        for j, form in enumerate(forms):
            k = i * len(forms) + j
            target = targets[k % len(targets)]  # A's files in turn: each form names another
            try:
                attacks.append(_attack(tool, schema, (slot, form), target, ways[k % len(ways)], aims))
            except Unfit as why:  # the slot takes no such value: the tool would refuse the call, never read the file
                unfit.setdefault(slot_name(slot), {}).setdefault(str(why), []).append(form)
    return attacks, unfit


def _ruled_out(unfit: dict[str, dict[str, list[str]]]) -> str:
    """Per slot, the forms each constraint ruled out: "id: path, file_url (not matching its pattern '^[a-z]+$')"."""
    return "; ".join(
        f"{slot}: " + ", ".join(f"{', '.join(forms)} ({why})" for why, forms in reasons.items())
        for slot, reasons in unfit.items()
    )


@dataclass(frozen=True)
class Aims:
    """What every attack of a tool is aimed from: B's own file, B's checkout, the jobs' names."""

    own: Target
    checkout: Path
    names: JobNames


def _attack(
    tool: str, schema: dict[str, Any], where: tuple[Slot, str], target: Target, variant: dict[str, Any], aims: Aims
) -> Attack:
    """One slot in one form: B's own file (or name) as the control, A's as the probe, a file (or job) that does not
    exist as the third; every other string names the job the call's file is of."""
    (slot, form), names = where, aims.names
    name = f"{tool}-{slot_name(slot)}-{form}"
    if form == "job":
        values = {"control": names.own, "probe": names.theirs, "missing": f"{names.own}-missing"}
    else:
        missing = aims.own.path.with_name(f"missing-{aims.own.path.name}")
        paths = {"control": aims.own.path, "probe": target.path, "missing": missing}
        values = {role: _named(path, form, aims.checkout) for role, path in paths.items()}
    fillers = {"control": names.own, "probe": names.theirs, "missing": names.own}
    calls = {
        role: ToolCall(f"tool-{role}-{name}", tool, arguments(schema, slot, value, fillers[role], variant))
        for role, value in values.items()
    }
    given = {calls[role].id: value for role, value in values.items()}
    filled = {calls[role].id: filler for role, filler in fillers.items()}
    return Attack(slot, form, target, calls["control"], calls["probe"], calls["missing"], given, variant, filled)


def _named(path: Path, form: str, checkout: Path) -> str:
    """How a call names the file: as it is, as a URL, relative to B's checkout, or through a link made there (as a
    repository may carry one, or B's shell make it)."""
    if form == "file_url":
        return path.as_uri()
    if form == "relative":
        return os.path.relpath(path, checkout)
    if form == "symlink":
        link = checkout / "links" / f"tool-{canary.new_canary()}"
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(path)
        return str(link)
    return str(path)


def _names(schemas: dict[str, Any]) -> str:
    return ", ".join(sorted(schemas)) or "none"
