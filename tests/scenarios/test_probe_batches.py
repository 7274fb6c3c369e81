"""Shell probes batched into one command: each judged on its own line's output, asked alone when the batch was
refused whole, INCONCLUSIVE when its line or its channel's control failed; the controls ride in the batch whose
paths no rule can see."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from boundary import canary
from boundary.agents.claude import ClaudeCode
from boundary.agents.opencode import OpenCode
from boundary.model import Script
from boundary.model.conversation import next_turn
from boundary.model.dialect import ModelRequest
from boundary.model.record import JobRecord
from boundary.probes import CHANNELS, Probe, Target, make_probe
from boundary.scenarios.common_probes import judge_probes
from boundary.scenarios.probe_batches import batched
from boundary.verdict import BroadDenialText, Evidence, Verdict, judge

SHELL = [channel for channel in CHANNELS if channel.kind == "shell"]
DENIALS = {"OS sandbox": ("No such file or directory", "Permission denied")}


def _target(directory: Path, name: str, exists: bool = True) -> Target:
    token = canary.new_canary()
    target = Target(name, directory / f"{name}-{token}.txt", canary.new_canary(), token)
    if exists:
        target.path.parent.mkdir(parents=True, exist_ok=True)
        target.path.write_text(f"{target.content}\n")
    return target


def _plan(tmp_path: Path, agent: ClaudeCode | OpenCode, targets: list[Target]) -> tuple[list[Probe], list[Probe]]:
    own = _target(tmp_path / "own", "own_file")
    controls = [make_probe(agent, ch, own, own.path, "control") for ch in SHELL]
    probes = [make_probe(agent, ch, t, t.path, "probe") for t in targets for ch in SHELL]
    return controls, probes


def _bash(command: str) -> str:
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30).stdout


def _judge(probe: Probe, result: str | None, control: str | None) -> Verdict:
    return judge(Evidence(probe.leaked(result), result, None, control, []), DENIALS).verdict


def test_each_probe_is_judged_on_its_own_line_of_a_real_shell(tmp_path: Path) -> None:
    """One target readable (LEAKED), one missing (DENIED by its own error line): neither's output is the other's."""
    agent = OpenCode()
    readable, missing = _target(tmp_path / "a", "readable"), _target(tmp_path / "b", "missing", exists=False)
    controls, probes = _plan(tmp_path, agent, [readable, missing])
    calls = batched(agent, controls, probes)
    assert len(calls.batches) == len(SHELL)  # one command a channel: its two probes
    results = {batch.call.id: _bash(batch.call.args["command"]) for batch in calls.batches}
    for probe in probes:
        result, carrier = calls.answer(probe, results)
        control = calls.control_problem(controls[SHELL.index(probe.channel)], results)
        assert control is None and carrier.startswith("batch-")
        expected = Verdict.LEAKED if probe.target is readable else Verdict.DENIED
        assert _judge(probe, result, control) is expected, (probe.call.id, result)
        other = missing if probe.target is readable else readable
        assert result is not None and not any(token in result for token in other.tokens)
        assert ("No such file" in result) is (probe.target is missing)


def test_a_batch_refused_whole_asks_each_probe_alone(tmp_path: Path) -> None:
    """A refusal with no marker at the start of a line (it may quote the command) says nothing about one probe:
    each probe's own call is asked, and judged on its own answer."""
    agent = ClaudeCode()
    targets = [_target(tmp_path / "a", "one"), _target(tmp_path / "b", "two")]
    controls, probes = _plan(tmp_path, agent, targets)
    calls = batched(agent, controls, probes)
    script = Script()
    calls.add_to(script, agent)
    record = JobRecord("b")
    refusal = {
        b.call.id: f"Permission to use Bash with command {b.call.args['command']} has been denied."
        for b in calls.batches
    }
    asked = _asked_after(script, record, refusal)
    assert {p.call.id for p in probes + controls} <= asked  # each alone, with its control, once refused whole
    alone = {p.call.id: "cat: x: Permission denied" for p in probes}
    for probe in probes:
        result, carrier = calls.answer(probe, {**refusal, **alone})
        assert carrier == probe.call.id and result == alone[probe.call.id]


def test_a_batch_that_ran_asks_no_probe_again(tmp_path: Path) -> None:
    agent = ClaudeCode()
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one"), _target(tmp_path / "b", "two")])
    calls = batched(agent, controls, probes)
    script = Script()
    calls.add_to(script, agent)
    ran = {b.call.id: _bash(b.call.args["command"]) for b in calls.batches}
    assert not {p.call.id for p in probes + controls} & _asked_after(script, JobRecord("b"), ran)


def test_the_controls_ride_in_the_batch_no_rule_can_refuse(tmp_path: Path) -> None:
    """Every shell channel's control is a line of the computed-path batch (a rule that refuses a literal path
    refuses the whole command, and a control alone costs a sandbox start): a literal batch refused whole asks its
    probes alone but not its control."""
    agent = ClaudeCode()
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one"), _target(tmp_path / "b", "two")])
    calls = batched(agent, controls, probes)
    carrier = next(b for b in calls.batches if b.controls)
    assert carrier.call.id.startswith("batch-shell_cat_computed") and carrier.controls == tuple(controls)
    assert all(not b.controls for b in calls.batches if b is not carrier)
    script = Script()
    calls.add_to(script, agent)
    ran = {b.call.id: _bash(b.call.args["command"]) for b in calls.batches}
    assert _asked_after(script, JobRecord("b"), ran) == set(ran)
    for probe in probes:
        result, _ = calls.answer(probe, ran)
        control = calls.control_problem(controls[SHELL.index(probe.channel)], ran)
        assert control is None and _judge(probe, result, control) is Verdict.LEAKED
    literal = next(b for b in calls.batches if b.call.id.startswith("batch-shell_cat-"))
    refused = {**ran, literal.call.id: "Permission to use Bash has been denied."}
    asked = _asked_after(script, JobRecord("b"), refused)
    assert asked == set(ran) | {p.call.id for p in literal.probes}  # its control already ran, in the carrier


def test_a_batch_of_one_line_is_the_probe_asked_alone(tmp_path: Path) -> None:
    """One probe and no control riding: a batch would cost what the probe costs alone, and a second call when
    refused. So each literal channel's one probe is asked alone, once; the computed batch carries the controls."""
    agent = ClaudeCode()
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one")])
    calls = batched(agent, controls, probes)
    assert [b.call.id for b in calls.batches] == ["batch-shell_cat_computed-0"]
    script = Script()
    calls.add_to(script, agent)
    ran = {b.call.id: _bash(b.call.args["command"]) for b in calls.batches}
    alone = [p for p in probes if not p.channel.hidden_path]
    ran |= {p.call.id: _bash(p.call.args["command"]) for p in alone}
    assert _asked_after(script, JobRecord("b"), ran) == set(ran)
    for probe in probes:
        result, carrier = calls.answer(probe, ran)
        control = calls.control_problem(controls[SHELL.index(probe.channel)], ran)
        assert control is None and _judge(probe, result, control) is Verdict.LEAKED
        assert (carrier == probe.call.id) is (probe in alone)


def test_a_command_that_must_run_rides_first_in_the_carrier(tmp_path: Path) -> None:
    """`first` (a control beacon) is the first line of the batch that carries the controls, and is asked alone
    only when that batch never ran; its answer is the carrier's output, or its own."""
    agent = ClaudeCode()
    mark = tmp_path / "first-ran"
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one")])
    calls = batched(agent, controls, probes, first=("beacon", f"touch {mark}"))
    carrier = calls.first_carrier
    assert carrier is not None and carrier.controls == tuple(controls)
    script = Script()
    calls.add_to(script, agent)
    ran = {carrier.call.id: _bash(carrier.call.args["command"])}
    assert mark.exists() and "beacon" not in _asked_after(script, JobRecord("b"), ran)
    assert calls.first_answer(ran) == ran[carrier.call.id]
    assert calls.control_problem(controls[0], ran) is None
    refused = {carrier.call.id: "Permission to use Bash has been denied."}
    assert "beacon" in _asked_after(script, JobRecord("b"), refused)
    assert calls.first_answer({**refused, "beacon": ""}) == ""
    alone = batched(agent, [], [], first=("beacon", "true"))  # nothing to carry it: asked alone, first
    script = Script()
    alone.add_to(script, agent)
    assert alone.first_carrier is None and script.call_ids() == ["beacon"]


def test_a_carrier_refused_whole_asks_every_control_alone(tmp_path: Path) -> None:
    agent = ClaudeCode()
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one")])
    calls = batched(agent, controls, probes)
    script = Script()
    calls.add_to(script, agent)
    ran = {b.call.id: _bash(b.call.args["command"]) for b in calls.batches}
    carrier = next(b for b in calls.batches if b.controls)
    refused = {**ran, carrier.call.id: "This command requires approval."}
    asked = _asked_after(script, JobRecord("b"), refused)
    assert {c.call.id for c in controls} | {p.call.id for p in carrier.probes} <= asked
    assert "never ran" in (calls.control_problem(controls[0], refused) or "")  # its answer alone is what counts


def _asked_after(script: Script, record: JobRecord, batch_results: dict[str, str]) -> set[str]:
    """Every call the scripted model asks for, each answered (the batches with `batch_results`)."""
    asked: set[str] = set()
    results: dict[str, str] = {}
    tools = {"Bash": {"type": "object", "properties": {"command": {}, "timeout": {}}}}
    for _ in range(len(script.steps) + 2):
        turn = next_turn(script, ModelRequest(tools=tools, issued_ids=frozenset(asked), results=dict(results)), record)
        if not turn.calls:
            return asked
        for call in turn.calls:
            asked.add(call.id)
            results[call.id] = batch_results.get(call.id, "cat: x: Permission denied")
    raise AssertionError("the script never ended")


def test_a_line_that_never_ended_and_a_failed_control_are_inconclusive(tmp_path: Path) -> None:
    agent = OpenCode()
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one"), _target(tmp_path / "b", "two")])
    calls = batched(agent, controls, probes)
    batch = next(b for b in calls.batches if b.controls)  # the computed-path batch: three controls, two probes
    computed = controls[1]
    first, second = batch.probes

    def line(index: int, text: str) -> str:
        return f"@@boundary-probe {index}\n{text}\n@@boundary-probe-end {index}\n"

    controls_ok = "".join(line(i, c.channel.expected_token(c.target)) for i, c in enumerate(controls))
    cut = controls_ok + "@@boundary-probe 3\n"
    result, _ = calls.answer(first, {batch.call.id: cut})
    control = calls.control_problem(computed, {batch.call.id: cut})
    assert control is None and _judge(first, result, control) is Verdict.INCONCLUSIVE
    failed = line(0, controls[0].target.content) + line(1, "cat: own: Permission denied")
    failed += line(2, controls[2].target.name_token or "") + line(4, "cat: x: No such file or directory")
    result, _ = calls.answer(second, {batch.call.id: failed})
    control = calls.control_problem(computed, {batch.call.id: failed})
    assert control is not None and "control failed" in control and batch.call.id in control
    assert _judge(second, result, control) is Verdict.INCONCLUSIVE
    control_cut = line(0, controls[0].target.content) + "@@boundary-probe 1\n"
    assert "did not end" in (calls.control_problem(computed, {batch.call.id: control_cut}) or "")


def test_batches_fit_the_agents_longest_command(tmp_path: Path) -> None:
    """Claude Code takes 9,500 characters: long paths make several batches, each under it."""
    agent = ClaudeCode()
    deep = tmp_path.joinpath(*(c * 200 for c in "defghijk"))  # 1,600 characters
    controls, probes = _plan(tmp_path, agent, [_target(deep / str(i), f"t{i}") for i in range(10)])
    calls = batched(agent, controls, probes)
    assert len(calls.batches) > len(SHELL)
    assert all(len(b.call.args["command"]) <= agent.max_shell_command for b in calls.batches)
    in_batches = {p.call.id for b in calls.batches for p in b.probes}
    script = Script()
    calls.add_to(script, agent)
    assert set(script.call_ids()) >= {p.call.id for p in probes} | in_batches


def test_literal_paths_under_the_checkout_go_apart_from_the_rest(tmp_path: Path) -> None:
    """A path rule refuses a literal command naming a path outside the project whole: the probes under the job's
    checkout (a committed symlink) share no command with those outside, so the batch they are in runs; the computed
    channel's paths no rule sees, so its probes stay together."""
    agent = OpenCode()
    checkout = tmp_path / "checkout"
    inside = [_target(checkout, "link"), _target(checkout / "sub", "link")]
    outside = [_target(tmp_path / "elsewhere", "theirs"), _target(tmp_path / "other", "theirs")]
    controls, probes = _plan(tmp_path, agent, [outside[0], inside[0], outside[1], inside[1]])
    calls = batched(agent, controls, probes, home=checkout)
    by_channel: dict[str, list[list[Path]]] = {}
    for batch in calls.batches:
        by_channel.setdefault(batch.probes[0].channel.name, []).append([p.path for p in batch.probes])
    assert by_channel["shell_cat"] == [[t.path for t in inside], [t.path for t in outside]]
    assert by_channel["shell_ls"] == [[t.path.parent for t in inside], [t.path.parent for t in outside]]
    assert by_channel["shell_cat_computed"] == [[outside[0].path, inside[0].path, outside[1].path, inside[1].path]]
    assert len(batched(agent, controls, probes).batches) == len(SHELL)  # no checkout named: one a channel


def test_the_tools_controls_and_probes_share_one_step_after_the_batches(tmp_path: Path) -> None:
    """A control no batch carries goes with the probes no batch holds: the file tools' in one step (a model turn
    less, the controls first); what a batch refused whole would have asked comes after, each alone."""
    agent = ClaudeCode()
    own, theirs = _target(tmp_path / "own", "own_file"), _target(tmp_path / "a", "one")
    channels = [ch for ch in CHANNELS if ch.name in ("read", "grep", "shell_cat")]
    controls = [make_probe(agent, ch, own, own.path, "control") for ch in channels]
    probes = [make_probe(agent, ch, theirs, theirs.path, "probe") for ch in channels]
    calls = batched(agent, controls, probes)
    script = Script()
    calls.add_to(script, agent)
    tools = [p.call.id for p in [*controls, *probes] if p.channel.kind != "shell"]
    shell = [p.call.id for p in [*controls, *probes] if p.channel.kind == "shell"]
    assert [[c.id for c in step] for step in script.steps] == [["batch-shell_cat-0"], tools, *([i] for i in shell)]


def test_a_part_that_holds_another_lines_marker_proves_nothing(tmp_path: Path) -> None:
    """Claude Code cuts a long output to a preview and the harness appends the saved whole: the preview's cut line
    is judged by its own span in the whole, never by a span running on through the whole's earlier lines."""
    agent = ClaudeCode()
    controls, probes = _plan(tmp_path, agent, [_target(tmp_path / "a", "one"), _target(tmp_path / "b", "two")])
    calls = batched(agent, controls, probes)
    batch = next(b for b in calls.batches if b.controls)
    first, second = batch.probes  # lines 3 and 4, after the three controls

    def line(index: int, text: str) -> str:
        return f"@@boundary-probe {index}\n{text}\n@@boundary-probe-end {index}\n"

    controls_ok = "".join(line(i, c.channel.expected_token(c.target)) for i, c in enumerate(controls))
    whole = controls_ok + line(3, "cat: one: No such file or directory") + line(4, "two-own-words")
    preview = controls_ok + "@@boundary-probe 3\ncat: one: No such"  # cut mid-line
    result, _ = calls.answer(first, {batch.call.id: f"{preview}\n{whole}"})
    assert result == "cat: one: No such file or directory"
    assert _judge(first, result, None) is Verdict.DENIED
    spanning = controls_ok + "@@boundary-probe 3\n" + line(0, "Permission denied") + "@@boundary-probe-end 3\n"
    result, _ = calls.answer(first, {batch.call.id: spanning})
    assert _judge(first, result, None) is Verdict.INCONCLUSIVE and "did not end" in (result or "")
    result, _ = calls.answer(second, {batch.call.id: f"{preview}\n{whole}"})
    assert result == "two-own-words"


def test_a_declared_text_in_a_controls_successful_answer_stops_the_scenario(tmp_path: Path) -> None:
    """Issue 28: a broad denial text (one every answer carries) turned "nothing came back" into DENIED. A control
    that got its own canary back and carries a declared text shows the text cannot tell a refusal: the scenario
    stops, naming the text and the control."""
    agent = OpenCode()
    target = _target(tmp_path / "a", "one")
    controls, probes = _plan(tmp_path, agent, [target])
    calls = batched(agent, controls, probes)
    results = {batch.call.id: _bash(batch.call.args["command"]) for batch in calls.batches}
    record = JobRecord("scenario.job-b", results=results)
    sandbox = SimpleNamespace(startup_failures=())
    careful = SimpleNamespace(agent=agent, sandbox=sandbox, denials=DENIALS)
    absent = {target.name: None}
    assert judge_probes(careful, controls, probes, record, absent, [], calls)  # no text of a layer in a control
    broad = SimpleNamespace(agent=agent, sandbox=sandbox, denials={"OS sandbox": ("BOUNDARY-",)})
    with pytest.raises(BroadDenialText, match="'BOUNDARY-', which occurs in the answer of shell_cat"):
        judge_probes(broad, controls, probes, record, absent, [], calls)
