"""Many probes of one shell channel in one command: one sandbox start where each probe would start its own.

A shell call costs a job a sandbox start and a model round trip (opencode's srt start is about half a second), and
most shell probes differ only in the path they name. So each shell channel's probes go in batches: one line per
probe, each between markers of its own. Each probe is judged on its own part only. A command refused whole (no
line of it ran: a rule that refuses one path refuses the whole command) proves nothing about any one probe, so then
each is asked alone, exactly as if there were no batch.

The channels' controls (the job's own file) ride as the first lines of a batch no path rule can refuse: the channel
whose paths are computed at run time, when there is one, carries every shell channel's control; otherwise each
channel's batches carry its own. A control is asked alone only when no batch that carries it ran. So does a call of
the job's own that must run (`first`: a control beacon), at the head of that batch. A batch of one line would cost
what the probe alone costs, and a second call if refused: such a probe is asked alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from boundary.agents.base import Agent
from boundary.model.script import Script, ToolCall
from boundary.probes import Probe, control_problem
from boundary.verdict import harness_note

BEGIN = "@@boundary-probe"
END = "@@boundary-probe-end"


@dataclass(frozen=True)
class ShellBatch:
    """One command: the controls it carries first, then a probe a line."""

    call: ToolCall
    controls: tuple[Probe, ...]
    probes: tuple[Probe, ...]

    def part(self, output: str, probe: Probe) -> str:
        """What the probe's own line printed; a harness note (INCONCLUSIVE) when its end marker never came."""
        return part(output, len(self.controls) + self.probes.index(probe)) or harness_note(
            f"the batched command {self.call.id} ran, but this probe's line did not end before another line's "
            "marker (cut short, still running)"
        )

    def control_problem(self, output: str, control: Probe) -> str | None:
        """None if the control's line, on the job's own file, returned its canary."""
        line = part(output, self.controls.index(control))
        problem = "its line did not end (cut short, still running)" if line is None else control_problem(control, line)
        return None if problem is None else f"in the batched command {self.call.id}: {problem}"


@dataclass
class ProbeCalls:
    """The calls that put `controls` and `probes` to the agent: each probe alone or as a line of a batch, and
    alone again if its batch was refused whole; each control alone unless a batch that carries it ran."""

    controls: list[Probe]
    probes: list[Probe]
    batches: list[ShellBatch] = field(default_factory=list)
    first: ToolCall | None = None  # a shell call of the job's own that must run (a control beacon)
    first_carrier: ShellBatch | None = None  # the batch whose first line it is; None: it is asked alone, first

    def add_to(self, script: Script, agent: Agent) -> None:
        """The batches first (`first` alone before them if none carries it); then the controls no batch carries and
        the probes no batch holds, controls first: in one step those that may run at once (a model turn less), each
        serial one alone; then what a batch refused whole would have asked, each alone."""
        if self.first is not None and self.first_carrier is None:
            script.add_calls([self.first], agent.serial_tools)
        for batch in self.batches:
            script.add_step(batch.call)
        if self.first is not None and self.first_carrier is not None:
            script.add_step(self.first, unless=_any_ran(agent, self.first_carrier.call.id))
        carried = {c.call.id: [b.call.id for b in self._carriers(c)] for c in self.controls}
        batch_of = self._batch_of()
        alone = [c.call for c in self.controls if not carried[c.call.id]]
        script.add_calls([*alone, *(p.call for p in self.probes if p.call.id not in batch_of)], agent.serial_tools)
        for control in self.controls:
            if carried[control.call.id]:
                script.add_step(control.call, unless=_any_ran(agent, *carried[control.call.id]))
        for batch in self.batches:
            for probe in batch.probes:
                script.add_step(probe.call, unless=_any_ran(agent, batch.call.id))

    def add_batch(
        self, agent: Agent, call_id: str, riding: tuple[Probe, ...], probes: list[Probe], first: str | None
    ) -> None:
        """A batch of `probes` with the controls `riding` first, and the command `first` before them if it fits."""
        command = _command(riding, probes)
        if first is not None:
            with_first = f"{first}\n{command}"
            if len(with_first) <= agent.max_shell_command:
                self.first_carrier = ShellBatch(agent.shell(call_id, with_first), riding, tuple(probes))
                self.batches.append(self.first_carrier)
                return
        self.batches.append(ShellBatch(agent.shell(call_id, command), riding, tuple(probes)))

    def answer(self, probe: Probe, results_of: dict[str, str]) -> tuple[str | None, str]:
        """(what came back for the probe, the id of the call that carried it)."""
        batch = self._batch_of().get(probe.call.id)
        output = None if batch is None else results_of.get(batch.call.id)
        if batch is None or output is None or probe.call.id in results_of or not ran(output):
            return results_of.get(probe.call.id), probe.call.id
        return batch.part(output, probe), batch.call.id

    def first_answer(self, results_of: dict[str, str]) -> str | None:
        """What came back for `first`: its own answer, else the output of the batch that carried it."""
        if self.first is None:
            return None
        if self.first.id in results_of or self.first_carrier is None:
            return results_of.get(self.first.id)
        return results_of.get(self.first_carrier.call.id)

    def control_problem(self, control: Probe, results_of: dict[str, str]) -> str | None:
        """None if the control returned the job's own canary: alone, or on its line in every batch that carried
        it and ran (one that failed anywhere fails)."""
        if control.call.id in results_of:
            return control_problem(control, results_of[control.call.id])
        outputs = [(b, results_of.get(b.call.id)) for b in self._carriers(control)]
        ran_in = [(batch, output) for batch, output in outputs if output is not None and ran(output)]
        if not ran_in:
            return control_problem(control, None)
        problems = [batch.control_problem(output, control) for batch, output in ran_in]
        return next((problem for problem in problems if problem is not None), None)

    def control_answers(self, control: Probe, results_of: dict[str, str]) -> list[str]:
        """What the control got back: its own answer, or its line of every batch that carried it and ran."""
        if control.call.id in results_of:
            return [results_of[control.call.id]]
        outputs = [(b, results_of.get(b.call.id)) for b in self._carriers(control)]
        lines = [part(output, batch.controls.index(control)) for batch, output in outputs if output and ran(output)]
        return [line for line in lines if line is not None]

    def _batch_of(self) -> dict[str, ShellBatch]:
        return {probe.call.id: batch for batch in self.batches for probe in batch.probes}

    def _carriers(self, control: Probe) -> list[ShellBatch]:
        return [batch for batch in self.batches if control in batch.controls]


def batched(
    agent: Agent,
    controls: list[Probe],
    probes: list[Probe],
    prefix: str = "",
    home: Path | None = None,
    first: tuple[str, str] | None = None,
) -> ProbeCalls:
    """The shell probes of each channel in batches that fit the agent's longest command (a probe too long for
    one, with the controls it carries, is asked alone). `home` (the job's checkout): a literal channel's probes
    that name a path under it go in batches apart from the rest, which a path rule may refuse whole (opencode
    refuses a command naming a path outside the project), so they are not asked alone again with them. `first`
    (call id, command): a command of the job's own that must run, as the first line of the batch carrying the
    controls (the first batch, when no channel hides its paths)."""
    calls = ProbeCalls(controls, probes, first=agent.shell(*first) if first is not None else None)
    shell = [control for control in controls if control.channel.command is not None]
    mine = {c.channel.name: [p for p in probes if p.channel.name == c.channel.name] for c in shell}
    hidden = next(
        (c for c in shell if c.channel.hidden_path and _groups(agent, tuple(shell), mine[c.channel.name])), None
    )
    for control in shell:
        riding = tuple(shell) if control is hidden else (() if hidden is not None else (control,))
        parts = _apart(mine[control.channel.name], home if not control.channel.hidden_path else None)
        groups = [group for part in parts for group in _groups(agent, riding, part)]
        for number, group in enumerate(groups):
            carries = first is not None and calls.first_carrier is None and (hidden is None or control is hidden)
            if len(riding) + len(group) + carries < 2:
                continue  # one line: the probe alone costs the same, and no second call if refused
            leading = first[1] if first is not None and carries else None
            calls.add_batch(agent, f"{prefix}batch-{control.channel.name}-{number}", riding, group, leading)
    return calls


def _apart(probes: list[Probe], home: Path | None) -> list[list[Probe]]:
    """The probes naming a path under `home`, then the rest (all together when there is no `home`)."""
    if home is None:
        return [probes]
    return [[probe for probe in probes if probe.path.is_relative_to(home) is under] for under in (True, False)]


def _groups(agent: Agent, riding: tuple[Probe, ...], probes: list[Probe]) -> list[list[Probe]]:
    groups: list[list[Probe]] = [[]]
    for probe in probes:
        if groups[-1] and len(_command(riding, [*groups[-1], probe])) > agent.max_shell_command:
            groups.append([])
        groups[-1].append(probe)
    return [group for group in groups if group and len(_command(riding, group)) <= agent.max_shell_command]


def _command(riding: tuple[Probe, ...], probes: list[Probe]) -> str:
    return "\n".join(_line(index, probe) for index, probe in enumerate([*riding, *probes]))


def _line(index: int, probe: Probe) -> str:
    # No groups or subshells: Claude Code refuses what it cannot check before it runs.
    assert probe.channel.command is not None
    return f'echo "{BEGIN} {index}"; {probe.channel.command(probe.path, True)}; echo "{END} {index}"'


def _any_ran(agent: Agent, *call_ids: str) -> Callable[[dict[str, str]], bool]:
    """Whether any of these batches ran, as far as the results back so far show."""
    return lambda results: any(i in results and ran(agent.full_result(results[i])) for i in call_ids)


def ran(output: str) -> bool:
    """Some line of the batch ran: a marker starts a line of its output (a refusal that quotes the command
    quotes `echo "@@…"`)."""
    return any(line.strip().startswith(f"{BEGIN} ") for line in output.splitlines())


def part(output: str, index: int) -> str | None:
    """What line `index` printed: the first span from its begin marker to its own end marker with no other marker
    between them; None when there is none.

    A span that holds another line's marker holds that line's output too, and proves nothing of this one: where an
    agent cuts a long output to a preview and appends the saved whole, the preview's begin marker is followed by
    the whole's earlier lines, their denials included. The whole then holds the line's own span.
    """
    lines = [line.strip() for line in output.splitlines()]
    markers = [at for at, line in enumerate(lines) if line.startswith(BEGIN)]  # the end markers start so too
    for at, following in itertools.pairwise(markers):
        if lines[at] == f"{BEGIN} {index}" and lines[following] == f"{END} {index}":
            return "\n".join(lines[at + 1 : following])
    return None
