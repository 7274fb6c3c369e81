"""The reach scenario's verdicts: one per cell, from what each call of job B returned (the rules are in
`boundary/reach/judge.py`; the scenario, what it runs, in `scenario.py`)."""

from __future__ import annotations

import re

from boundary import verdict
from boundary.reach import programs
from boundary.reach.judge import (
    OS_LAYER,
    Attempt,
    Control,
    bus_answers,
    control_of,
    finished,
    first,
    for_target,
    inconclusive,
    judge_attempts,
    judge_refusal,
    leak,
    parse,
    refused_whole,
)
from boundary.reach.places import (
    Place,
    RequestLog,
)
from boundary.runners.contract import Runner
from boundary.sandboxes import OS_DENIALS
from boundary.scenarios.base import Cell
from boundary.scenarios.reach.discovered import judge_discovered, no_socket, relevant
from boundary.scenarios.reach.tools import CHANNEL as ANY_TOOL
from boundary.scenarios.reach.tools import UrlPlan, judge_place
from boundary.verdict import UNRECOGNISED, Finding, Proof, Verdict, denied, recognise_layer

# The shell's words for a client whose interpreter it cannot run (`exec /usr/bin/python3 …` in bash or sh): not
# there, or not for this job's user (a harness's Python under a directory only root may enter).
NO_INTERPRETER = re.compile(r"python[0-9.]*: (No such file or directory|not found|command not found|Permission denied)")

# The harness's own note in an agent's answer (boundary.verdict.HARNESS_NOTE, where that exists): what it could not
# read may hold anything.
HARNESS_NOTE = getattr(verdict, "HARNESS_NOTE", "[boundary harness:")

PROGRAM_OF = {program.channel: program for program in programs.PROGRAMS}
SHELL_CHANNELS = ("shell", "shell_discovered", *PROGRAM_OF)
SHELL_CALL = "reach"  # the one shell call: the client's controls, every known address, then what it discovers


class Judge:
    """One verdict per cell, from what each call returned (`boundary/reach/judge.py` has the rules)."""

    def __init__(
        self,
        runner: Runner,
        results: dict[str, str],
        own: str,
        public: str,
        problems: list[str],
        absent: dict[str, str | None],
        any_tool: tuple[UrlPlan, RequestLog],
    ) -> None:
        self.runner, self.results, self.own, self.public = runner, results, own, public
        self.problems, self.absent, (self.urls, self.log) = problems, absent, any_tool
        # A refusal of a whole shell call counts only from the agent's or runner's own layers, by their own words:
        # the kernel's texts ("No such file or directory"), whichever layer claims them, would also explain a
        # client that never started.
        self.call_denials = {
            layer: kept
            for layer, texts in runner.denials.items()
            if layer != OS_LAYER and (kept := tuple(t for t in texts if t not in OS_DENIALS))
        }

    def cell(self, cell: Cell, targets: list[Place]) -> Finding:
        target, channel = cell
        place = next(p for p in targets if p.name == target)
        if channel == ANY_TOOL:
            why = [*self.problems, *([absent] if (absent := self.absent.get(target)) else [])]
            return judge_place(self.urls, place, self.results, self.public, why, self.runner.denials, self.log)
        call = call_of(cell)
        result = self.results.get(call)
        found = self._leaked(place, channel, result or "")
        if found:
            return Finding(Verdict.LEAKED, "none", found)
        why = [*self.problems]
        why += [f"the {call} call never ran: no result reached the model server"] if result is None else []
        why += [absent] if (absent := self.absent.get(target)) else []
        why += [f"what the job got back is not all known: {result[:200]}"] if result and HARNESS_NOTE in result else []
        if channel in PROGRAM_OF:
            return inconclusive(why) or self._program(PROGRAM_OF[channel], place, result or "")
        if channel != "shell_discovered" and parse(result or "") and not finished(result or ""):  # each listing's own
            why.append("the client did not finish (no `REACH done`): what it did not print proves nothing")
        if result is not None and channel in SHELL_CHANNELS and not parse(result) and NO_INTERPRETER.search(result):
            why.append(
                f"the client never started: the job's shell cannot run the Python 3 it runs the client under "
                f"({' '.join(result.split())[:160]}). It needs one at that path that the job's user may run: a "
                "container's image needs python3"
            )
        if why or result is None:
            return Finding(Verdict.INCONCLUSIVE, "", "; ".join(why))
        if channel == "shell":
            return self._shell(place, result)
        if channel == "shell_discovered":
            return self._discovered(place, result)
        return judge_refusal(result, self._fetch_control(), self.runner.denials)

    def _leaked(self, place: Place, channel: str, result: str) -> str | None:
        """The target's canary in what this channel's attempts got back (or in anything the job printed outside the
        client's lines); for the bus, every bus that answered this channel's `Hello`."""
        if channel not in SHELL_CHANNELS:
            said = leak([place.token], result)
            return f"{place.name}'s canary came back: {said}" if said else None
        attempts = _relevant(place, channel, parse(result))
        if place.kind == "dbus":
            return "; ".join(f"the job made a method call on a system bus: {a}" for a in bus_answers(attempts)) or None
        outside = "\n".join(line for line in result.splitlines() if not line.startswith("REACH "))
        said = leak([place.token], "\n".join([*(a.text for a in attempts), outside]))
        return f"{place.name}'s canary came back: {said}" if said else None

    def _program(self, program: programs.Program, place: Place, result: str) -> Finding:
        """One program's tries at a target. Its "not there" proves the boundary only as the Python client's does:
        that client, in the same shell call and so the same network, reached its own listener of that kind."""
        if programs.not_found(program, result):
            return denied(
                Proof.NOTHING_TO_AIM, "n/a", f"the job has no {program.name} (not on its PATH nor in /usr/bin)"
            )
        control = self._shell_control(SHELL_CALL, f"control:{'tcp' if place.kind == 'tcp' else 'unix'}")
        attempts = _relevant(place, program.channel, parse(result))
        if not attempts:
            return self._unsaid(program.name, place, result, control)
        if not programs.finished(program, result):
            return Finding(Verdict.INCONCLUSIVE, "", f"{program.name} did not finish its tries (no `{program.done}`)")
        return no_socket(attempts, control) or judge_attempts(attempts, control, self.call_denials)

    def _shell_control(self, call: str, label: str) -> Control:
        result = self.results.get(call)
        if result is None:
            return Control(False, why=f"the {call} control never ran")
        refused = recognise_layer(result, self.call_denials) if refused_whole(result) else UNRECOGNISED
        return control_of(first(parse(result), label), self.own, None if refused == UNRECOGNISED else refused)

    def _shell(self, place: Place, result: str) -> Finding:
        kind = "tcp" if place.kind == "tcp" else "unix"
        control = self._shell_control(SHELL_CALL, f"control:{kind}")
        attempts = _relevant(place, "shell", parse(result))
        if not attempts:
            return self._unsaid("the Python client", place, result, control)
        return judge_attempts(attempts, control, self.call_denials)

    def _unsaid(self, who: str, place: Place, result: str, control: Control) -> Finding:
        """No line of `who`'s about the place. Only a call refused whole is judged by what it answered: where any
        program printed, a layer's words in its lines say nothing of `who`, which may have been killed."""
        if refused_whole(result):
            return judge_refusal(result, control, self.call_denials)
        return Finding(Verdict.INCONCLUSIVE, "", f"{who} printed no line for {place.name}: what it did is unknown")

    def _discovered(self, place: Place, result: str) -> Finding:
        """The Python client's listing and the shell's (`discovered.py`); a call refused whole, by its words."""
        if refused_whole(result):
            control = self._shell_control(SHELL_CALL, f"control:{'tcp' if place.kind == 'tcp' else 'unix'}")
            return judge_refusal(result, control, self.call_denials)
        return judge_discovered(place, parse(result), result, self.own, self.call_denials)

    def _fetch_control(self) -> Control:
        result = self.results.get("fetch-control")
        if result is None:
            return Control(False, why="the fetch control never ran")
        if self.public in result:
            return Control(True)
        layer = recognise_layer(result, self.runner.denials)
        flat = " ".join(result.split())[:160]
        if layer != UNRECOGNISED:
            return Control(False, layer, f"the fetch control was refused by the {layer} layer too")
        return Control(False, why=f"control failed: the public page's canary did not come back ({flat})")


def call_of(cell: Cell) -> str:
    """The scripted call whose result judges the cell."""
    target, channel = cell
    return SHELL_CALL if channel in SHELL_CHANNELS else f"{channel}-{target}"


def _relevant(place: Place, channel: str, attempts: list[Attempt]) -> list[Attempt]:
    """The client's lines about this target through this channel: at its known address (`<name>:direct`,
    `<name>:proxy`), by one program (`<program>:<name>`), or where either listing found it (`discovered.py`)."""
    if channel == "shell":
        return for_target(attempts, f"{place.name}:")
    if channel in PROGRAM_OF:
        return [a for a in attempts if a.label == f"{PROGRAM_OF[channel].label}{place.name}"]
    return relevant(place, attempts)
