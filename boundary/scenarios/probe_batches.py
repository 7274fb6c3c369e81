"""Many probes of one shell channel in one command: one sandbox start where each probe would start its own.

A shell call costs a job a sandbox start and a model round trip (opencode's srt start is about half a second), and
most shell probes differ only in the path they name. So each shell channel's probes go in batches: one line per
probe, each between markers of its own, the job's own file first (the batch's control). Each probe is judged on
its own part only. A command refused whole (no line of it ran: a rule that refuses one path refuses the whole
command) proves nothing about any one probe, so then each is asked alone, exactly as if there were no batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from boundary.agents.base import Agent
from boundary.model.script import Script, ToolCall
from boundary.probes import Probe, control_problem
from boundary.verdict import harness_note

BEGIN = "@@boundary-probe"
END = "@@boundary-probe-end"
CONTROL = 0  # the batch's first line: the job's own file


@dataclass(frozen=True)
class ShellBatch:
    """One command: the channel's control on line 0, then a probe a line."""

    call: ToolCall
    control: Probe
    probes: tuple[Probe, ...]

    def part(self, output: str, probe: Probe) -> str:
        """What the probe's own line printed; a harness note (INCONCLUSIVE) when its end marker never came."""
        return part(output, self.probes.index(probe) + 1) or harness_note(
            f"the batched command {self.call.id} ran, but this probe's line did not end (cut short, still running)"
        )

    def control_problem(self, output: str) -> str | None:
        """None if the batch's own line on the job's own file returned its canary."""
        problem = control_problem(self.control, part(output, CONTROL))
        return None if problem is None else f"in the batched command {self.call.id}: {problem}"


@dataclass
class ProbeCalls:
    """The calls that put `controls` and `probes` to the agent: each probe alone or as a line of a batch, and
    alone again if its batch was refused whole; each control alone unless its channel's batches answered all."""

    controls: list[Probe]
    probes: list[Probe]
    batches: list[ShellBatch] = field(default_factory=list)

    def add_to(self, script: Script, agent: Agent) -> None:
        """The batches first (each carries its control); then every other control before any other probe, and
        what a batch refused whole would have asked, each alone."""
        batch_of = self._batch_of()
        for batch in self.batches:
            script.add_step(batch.call)
        covered = {c.call.id: carried for c in self.controls if (carried := self._channel_batches(c))}
        script.add_calls([c.call for c in self.controls if c.call.id not in covered], agent.serial_tools)
        for control in self.controls:
            if control.call.id in covered:
                script.add_step(control.call, unless=_ran(agent, *(b.call.id for b in covered[control.call.id])))
        script.add_calls([p.call for p in self.probes if p.call.id not in batch_of], agent.serial_tools)
        for batch in self.batches:
            for probe in batch.probes:
                script.add_step(probe.call, unless=_ran(agent, batch.call.id))

    def answer(self, probe: Probe, results_of: dict[str, str]) -> tuple[str | None, str, str | None]:
        """(what came back for the probe, the id of the call that carried it, and, when a batch did, its own
        control's problem)."""
        batch = self._batch_of().get(probe.call.id)
        output = None if batch is None else results_of.get(batch.call.id)
        if batch is None or output is None or probe.call.id in results_of or not ran(output):
            return results_of.get(probe.call.id), probe.call.id, None
        return batch.part(output, probe), batch.call.id, batch.control_problem(output)

    def _batch_of(self) -> dict[str, ShellBatch]:
        return {probe.call.id: batch for batch in self.batches for probe in batch.probes}

    def _channel_batches(self, control: Probe) -> list[ShellBatch]:
        """The batches that carry every probe of the control's channel (none when any is asked alone anyway)."""
        channel = control.channel.name
        of_channel = [p for p in self.probes if p.channel.name == channel]
        batches = [b for b in self.batches if b.control is control]
        if not batches or len(of_channel) != sum(len(b.probes) for b in batches):
            return []
        return batches


def batched(agent: Agent, controls: list[Probe], probes: list[Probe], prefix: str = "") -> ProbeCalls:
    """The shell probes of each channel in batches that fit the agent's longest command (a probe too long for
    one, with the control, is asked alone)."""
    calls = ProbeCalls(controls, probes)
    for control in controls:
        if control.channel.command is None:
            continue
        mine = [p for p in probes if p.channel.name == control.channel.name]
        for number, group in enumerate(_groups(agent, control, mine)):
            call = agent.shell(f"{prefix}batch-{control.channel.name}-{number}", _command(control, group))
            calls.batches.append(ShellBatch(call, control, tuple(group)))
    return calls


def _groups(agent: Agent, control: Probe, probes: list[Probe]) -> list[list[Probe]]:
    groups: list[list[Probe]] = [[]]
    for probe in probes:
        if groups[-1] and len(_command(control, [*groups[-1], probe])) > agent.max_shell_command:
            groups.append([])
        groups[-1].append(probe)
    return [group for group in groups if group and len(_command(control, group)) <= agent.max_shell_command]


def _command(control: Probe, probes: list[Probe]) -> str:
    return "\n".join(_line(index, probe) for index, probe in enumerate([control, *probes]))


def _line(index: int, probe: Probe) -> str:
    # No groups or subshells: Claude Code refuses what it cannot check before it runs.
    assert probe.channel.command is not None
    return f'echo "{BEGIN} {index}"; {probe.channel.command(probe.path, True)}; echo "{END} {index}"'


def _ran(agent: Agent, *call_ids: str) -> Callable[[dict[str, str]], bool]:
    """Whether every one of these batches ran, as far as the results back so far show."""
    return lambda results: all(i in results and ran(agent.full_result(results[i])) for i in call_ids)


def ran(output: str) -> bool:
    """Some line of the batch ran: a marker starts a line of its output (a refusal that quotes the command
    quotes `echo "@@…"`)."""
    return any(line.strip().startswith(f"{BEGIN} ") for line in output.splitlines())


def part(output: str, index: int) -> str | None:
    """What line `index` printed between its markers; None when either marker is missing."""
    lines = [line.strip() for line in output.splitlines()]
    begin, end = f"{BEGIN} {index}", f"{END} {index}"
    if begin not in lines:
        return None
    start = lines.index(begin)
    if end not in lines[start:]:
        return None
    return "\n".join(lines[start + 1 : lines.index(end, start)])
