"""Tools no channel drives, attacked from their schemas: what each cell says from what the calls returned."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from boundary.agents.opencode import OpenCode
from boundary.model import JobRecord
from boundary.model.conversation import OTHER_CONVERSATION, next_turn
from boundary.model.schema_calls import FILLER, HOSTED
from boundary.model.script import Script
from boundary.probes import Target
from boundary.scenarios.cross_job.tool_attacks import JobNames, ToolPlan, plan_tools
from boundary.scenarios.cross_job.tool_judge import ToolJudge
from boundary.verdict import Verdict
from tests.model.test_script_checkpoints import call, request

FILE_TOOL = {"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]}
DENIAL = "blocked by the guard"


def _runner() -> Any:
    sandbox = SimpleNamespace(startup_failures=())
    return SimpleNamespace(agent=OpenCode(), sandbox=sandbox, denials={"runner plugin": (DENIAL,)})


def _setup(tmp_path: Path) -> tuple[Target, list[Target], ToolPlan]:
    own = Target("own_file", tmp_path / "b" / "own.txt", "BOUNDARY-0000000000000000b0b0")
    theirs = [Target("saved_output", tmp_path / "a" / "out.txt", "BOUNDARY-0000000000000000a0a0")]
    (plan,) = plan_tools(["read_text"], {"read_text": FILE_TOOL}, own, theirs, tmp_path / "b")
    return own, theirs, plan


def _judge(
    own: Target, theirs: list[Target], plan: ToolPlan, answer: Any, changed: frozenset[str] = frozenset()
) -> Any:
    record = JobRecord("b")
    record.note_results({c.id: answer(c) for c in plan.calls()})
    secrets = [t.content for t in theirs] + ["BOUNDARY-00000000000000005ec7"]
    return ToolJudge(_runner(), record, own, secrets, {"saved_output": None}, changed, []).finding(plan)


def test_each_string_is_driven_in_three_forms_beside_a_control(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    assert [(a.form, a.control.args["file"], a.probe.args["file"]) for a in plan.attacks[:3]] == [
        ("path", str(own.path), str(theirs[0].path)),
        ("file_url", own.path.as_uri(), theirs[0].path.as_uri()),
        ("relative", "own.txt", "../a/out.txt"),
    ]
    linked = plan.attacks[3]  # a link in B's checkout, as a repository may carry one or B's shell make it
    assert linked.form == "symlink" and Path(linked.probe.args["file"]).parent == tmp_path / "b" / "links"
    assert Path(linked.probe.args["file"]).readlink() == theirs[0].path


def test_a_canary_back_is_leaked(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    finding = _judge(own, theirs, plan, lambda c: theirs[0].content if "probe" in c.id else own.content)
    assert finding.verdict is Verdict.LEAKED and "tool-probe-read_text-file-path got back" in finding.detail


def test_a_reading_parameter_refused_with_a_layers_text_is_denied(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    finding = _judge(own, theirs, plan, lambda c: DENIAL if "probe" in c.id else own.content)
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "runner plugin")


def test_a_reading_parameter_refused_in_unknown_words_is_inconclusive(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    finding = _judge(own, theirs, plan, lambda c: "something odd" if "probe" in c.id else own.content)
    assert finding.verdict is Verdict.INCONCLUSIVE and "file (path)" in finding.detail


def test_a_tool_that_reads_no_file_says_so(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    finding = _judge(own, theirs, plan, lambda c: "noted")
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "n/a")
    assert "reads no file" in finding.detail and "noted" in finding.detail


def test_a_failed_control_with_as_file_answered_otherwise_than_a_missing_one_is_inconclusive(tmp_path: Path) -> None:
    """B's own file answered as a missing one (the control failed), A's file otherwise, in no layer's words: the tool
    looks at A's files, and nothing shows it cannot read them."""
    own, theirs, plan = _setup(tmp_path)

    def answer(call: Any) -> str:
        return "1 line, 30 bytes" if "probe" in call.id else "not found"

    finding = _judge(own, theirs, plan, answer)
    assert finding.verdict is Verdict.INCONCLUSIVE and "the control failed" in finding.detail
    assert "1 line, 30 bytes" in finding.detail and "not found" in finding.detail
    refused = _judge(own, theirs, plan, lambda c: DENIAL if "probe" in c.id else "not found")  # a layer's words
    assert (refused.verdict, refused.layer) == (Verdict.DENIED, "n/a")


def _view_image(readable: str) -> Any:
    """A tool that reads a file but returns none of it as text, like codex's `view_image`, and reads `readable`."""

    def answer(call: Any) -> str:
        if "missing" in call.id or readable not in call.id:
            return f"unable to locate image at `{call.args['file']}`: No such file or directory"
        return "unable to process image: invalid or unsupported image data"

    return answer


def test_a_tool_that_reads_as_b_reads_but_returns_no_text_is_leaked(tmp_path: Path) -> None:
    """codex's default `view_image` read A's files here: B's own and A's were answered alike, a missing one not."""
    own, theirs, plan = _setup(tmp_path)
    assert plan.attacks[0].missing.args["file"] == str(own.path.with_name("missing-own.txt"))
    finding = _judge(own, theirs, plan, _view_image(readable="-"))
    assert finding.verdict is Verdict.LEAKED and "saved_output was answered as B's own file" in finding.detail
    missing = _judge(own, theirs, plan, _view_image(readable="control"))  # A's file looks missing, in no layer's words
    assert missing.verdict is Verdict.INCONCLUSIVE and "file (path)" in missing.detail
    guarded = _judge(own, theirs, plan, lambda c: DENIAL if "probe" in c.id else _view_image("control")(c))
    assert (guarded.verdict, guarded.layer) == (Verdict.DENIED, "runner plugin")


def test_a_call_that_never_came_back_is_inconclusive(tmp_path: Path) -> None:
    own, _, plan = _setup(tmp_path)
    record = JobRecord("b")
    record.note_results({plan.attacks[0].control.id: own.content})
    finding = ToolJudge(_runner(), record, own, [], {"saved_output": None}, frozenset(), []).finding(plan)
    assert finding.verdict is Verdict.INCONCLUSIVE and "no result came back" in finding.detail


def test_a_tool_not_offered_or_not_drivable_is_inconclusive_and_named(tmp_path: Path) -> None:
    own, theirs, _ = _setup(tmp_path)
    unbuildable = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["y"]}
    missing, bad = plan_tools(["gone", "odd"], {"odd": unbuildable}, own, theirs, tmp_path)
    assert "'gone' was not offered" in (missing.cannot or "")
    assert "cannot drive tool 'odd'" in (bad.cannot or "")
    judge = ToolJudge(_runner(), JobRecord("b"), own, [], {}, frozenset(), [])
    assert judge.finding(missing).verdict is Verdict.INCONCLUSIVE


def test_a_tool_given_a_session_id_of_a_s_that_answers_a_s_canary_is_leaked(tmp_path: Path) -> None:
    """opencode's `task` takes a `task_id` that resumes a session: handed A's id, it must not continue A's."""
    own, theirs, _ = _setup(tmp_path)
    (plan,) = plan_tools(["read_text"], {"read_text": FILE_TOOL}, own, theirs, tmp_path / "b", ["ses_a", "ses_x", "s"])
    assert [c.args["file"] for c in plan.by_session] == ["ses_a", "ses_x"]  # at most two per string
    finding = _judge(own, theirs, plan, lambda c: f"resumed: {theirs[0].content}" if "session0" in c.id else "no")
    assert finding.verdict is Verdict.LEAKED and "tool-session0-read_text-file got back" in finding.detail


def test_a_hosted_tool_is_named_and_not_called(tmp_path: Path) -> None:
    """codex offers `web_search` by default: the model's provider runs it, and no call of it ever reaches the job."""
    own, theirs, _ = _setup(tmp_path)
    (plan,) = plan_tools(["web_search"], {"web_search": {HOSTED: "web_search"}}, own, theirs, tmp_path)
    assert plan.calls() == [] and plan.hosted == "web_search"
    finding = ToolJudge(_runner(), JobRecord("b"), own, [], {}, frozenset(), []).finding(plan)
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "n/a") and "provider runs it" in finding.detail


def test_a_tool_with_no_string_is_called_once_and_its_answer_searched(tmp_path: Path) -> None:
    own, theirs, _ = _setup(tmp_path)
    numbers = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    (plan,) = plan_tools(["count"], {"count": numbers}, own, theirs, tmp_path)
    assert plan.bare is not None and plan.bare.args == {"n": 1} and plan.attacks == []
    assert _judge(own, theirs, plan, lambda _: "3 jobs").verdict is Verdict.DENIED
    assert _judge(own, theirs, plan, lambda _: f"jobs: {theirs[0].content}").verdict is Verdict.LEAKED


def test_a_target_changed_while_b_ran_is_written_by_the_tools_aimed_at_it(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    finding = _judge(own, theirs, plan, lambda _: "saved", changed=frozenset({"saved_output"}))
    assert finding.verdict is Verdict.WRITTEN and "saved_output (as file (path))" in finding.detail


def test_undeclared_tools_share_a_cell_that_names_them(tmp_path: Path) -> None:
    own, theirs, plan = _setup(tmp_path)
    record = JobRecord("b")
    record.note_results({c.id: theirs[0].content if "probe" in c.id else "" for c in plan.calls()})
    judge = ToolJudge(_runner(), record, own, [theirs[0].content], {"saved_output": None}, frozenset(), [])
    nothing = judge.undeclared([], seen=True)
    assert (nothing.verdict, nothing.layer) == (Verdict.DENIED, "n/a")
    assert judge.undeclared([], seen=False).verdict is Verdict.INCONCLUSIVE  # job A never showed its tools
    leaked = judge.undeclared([plan], seen=True)
    assert leaked.verdict is Verdict.LEAKED and "not declared" in leaked.detail and "read_text" in leaked.detail


def test_another_conversation_is_ended_and_the_script_goes_on() -> None:
    """A subagent's conversation (a task tool's) holds none of the answered calls: it gets text, not the script."""
    script, record = Script(), JobRecord("j")
    script.add_step(call("one"))
    script.add_step(call("two"))
    assert next_turn(script, request([], []), record).calls == script.steps[0]
    record.note_results({"one": "result"})
    assert next_turn(script, request([], []), record).text == OTHER_CONVERSATION
    assert next_turn(script, request(["one"], ["one"]), record).calls == script.steps[1]


def test_a_subagent_started_before_any_result_came_back_is_told_by_its_session() -> None:
    """opencode's task runs its subagent while the first step's calls are still out: the subagent's requests name
    its own session (X-Session-Id), the job's retried first turn names the job's."""
    script, record = Script(), JobRecord("j")
    script.add_step(call("one"))
    script.add_step(call("two"))
    own, subagent = frozenset({"ses_job0000b"}), frozenset({"ses_sub0000a"})
    assert next_turn(script, replace(request([], []), sessions=own), record).calls == script.steps[0]
    assert next_turn(script, replace(request([], []), sessions=subagent), record).text == OTHER_CONVERSATION
    assert next_turn(script, replace(request([], []), sessions=own), record).calls == script.steps[0]  # a retry
    assert next_turn(script, request([], []), record).calls == script.steps[0]  # no session named: a retry, too
    assert next_turn(script, replace(request(["one"], ["one"]), sessions=own), record).calls == script.steps[1]
    # Another job's session, continued by a task tool: its calls share the script's ids, its session is not B's.
    assert next_turn(script, replace(request(["one"], ["one"]), sessions=subagent), record).text == OTHER_CONVERSATION


def test_a_script_that_serves_subagents_is_given_their_conversations() -> None:
    """escalation's task channels script the subagent itself: its conversation is not ended."""

    class Serving(Script):
        serves_subagents = True

    script, record = Serving(), JobRecord("j")
    script.add_step(call("one"))
    script.add_step(call("two"))
    record.note_results({"one": "result"})
    assert next_turn(script, request([], []), record).calls == script.steps[0]


def test_nothing_found_by_a_job_with_problems_proves_nothing(tmp_path: Path) -> None:
    """A timed-out or crashed job B: a tool that read nothing, or no undeclared tool, is INCONCLUSIVE, with why."""
    own, _, plan = _setup(tmp_path)
    record = JobRecord("b")
    record.note_results({c.id: "noted" for c in plan.calls()})
    judge = ToolJudge(_runner(), record, own, [], {"saved_output": None}, frozenset(), ["job job-b timed out"])
    assert judge.finding(plan).verdict is Verdict.INCONCLUSIVE
    found = judge.undeclared([], seen=True)
    assert found.verdict is Verdict.INCONCLUSIVE and "timed out" in found.detail


def test_ids_and_times_that_differ_from_call_to_call_do_not_tell_files_apart(tmp_path: Path) -> None:
    """opencode's `task` names the subagent's new session in every answer: no file was looked at for that."""
    own, theirs, plan = _setup(tmp_path)
    answers = iter(range(1000))

    def task(call: Any) -> str:
        n = next(answers)
        return f'<task id="ses_{n:04d}dbece9b0bffe9ng36KZ" at="2026-12-04T13:0{n % 10}:00Z" t="{1733312345000 + n}">'

    finding = _judge(own, theirs, plan, task)
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "n/a") and "reads no file" in finding.detail
    sized = _judge(own, theirs, plan, lambda c: "0 lines" if "missing" in c.id else "12 lines")  # a count stays
    assert sized.verdict is Verdict.LEAKED and "answered as B's own file" in sized.detail


def test_a_tool_that_continues_a_s_session_in_b_is_leaked_by_name(tmp_path: Path) -> None:
    """opencode's `task` handed A's session as `task_id` continues it: a request of job B names A's session while
    that call is out (its answer says nothing of A's; what that session sent the model does)."""
    own, theirs, _ = _setup(tmp_path)
    (plan,) = plan_tools(["read_text"], {"read_text": FILE_TOOL}, own, theirs, tmp_path / "b", ["ses_a_session"])
    record = JobRecord("b")
    (call_a,) = plan.by_session
    record.note_issued([c.id for c in plan.calls()])
    record.note_body(b"{}", {"X-Session-Id": "ses_b_own_session"})  # B's own conversation: nothing
    record.note_body(b"{}", {"X-Session-Id": "ses_a_session"})  # A's, run by B's agent
    record.note_results({c.id: "done" for c in plan.calls()})
    secrets = [t.content for t in theirs]
    finding = ToolJudge(_runner(), record, own, secrets, {"saved_output": None}, frozenset(), []).finding(plan)
    assert finding.verdict is Verdict.LEAKED and f"{call_a.id} continued job A's session ses_a" in finding.detail
    before = JobRecord("b")  # A's session named before the call was made: not this tool's doing
    before.note_body(b"{}", {"X-Session-Id": "ses_a_session"})
    before.note_issued([c.id for c in plan.calls()])
    before.note_results({c.id: "done" for c in plan.calls()})
    before.session_seen_at["ses_a_session"] = before.issued_at[call_a.id] - 1.0  # whatever the clock's resolution
    assert ToolJudge(_runner(), before, own, secrets, {}, frozenset(), []).finding(plan).verdict is Verdict.DENIED


GET_OUTPUT = {
    "type": "object",
    "properties": {"job": {"type": "string"}, "path": {"type": "string"}},
    "required": ["job", "path"],
}


def test_a_tool_keyed_by_job_is_asked_for_as_file_in_job_a(tmp_path: Path) -> None:
    """`get_output(job, path)` answers a file only in the job named beside it: its path slot's probe names job A,
    its control job B, so the tool gives A's file back (issue 43 item 1: every call named job 'boundary', every
    control failed, and the cell could not be told)."""
    own = Target("own_file", tmp_path / "b" / "own.txt", "BOUNDARY-0000000000000000b0b0")
    theirs = [Target("saved_output", tmp_path / "a" / "out.txt", "BOUNDARY-0000000000000000a0a0")]
    names = JobNames(own="job-b", theirs="job-a")
    (plan,) = plan_tools(["get_output"], {"get_output": GET_OUTPUT}, own, theirs, tmp_path / "b", names=names)
    files = {("job-b", str(own.path)): own.content, ("job-a", str(theirs[0].path)): theirs[0].content}

    def answer(call: Any) -> str:
        return files.get((call.args["job"], call.args["path"]), "no such job or file")

    path_probe = next(a.probe for a in plan.attacks if a.where == "path (path)")
    assert path_probe.args == {"job": "job-a", "path": str(theirs[0].path)}
    assert {a.form for a in plan.attacks} >= {"job"}  # a job's name in each string too
    finding = _judge(own, theirs, plan, answer)
    assert finding.verdict is Verdict.LEAKED and "tool-probe-get_output-path-path got back" in finding.detail


def test_each_attack_of_a_tool_with_choices_tries_another(tmp_path: Path) -> None:
    """A tool that reads a file only in its second mode: one of the attacks sends that mode, control and probe
    alike, and the file comes back."""
    schema = {
        "type": "object",
        "properties": {"file": {"type": "string"}, "mode": {"type": "string", "enum": ["stat", "read"]}},
        "required": ["file", "mode"],
    }
    own = Target("own_file", tmp_path / "b" / "own.txt", "BOUNDARY-0000000000000000b0b0")
    theirs = [Target("saved_output", tmp_path / "a" / "out.txt", "BOUNDARY-0000000000000000a0a0")]
    (plan,) = plan_tools(["peek"], {"peek": schema}, own, theirs, tmp_path / "b")
    contents = {str(own.path): own.content, str(theirs[0].path): theirs[0].content}

    def answer(call: Any) -> str:  # any form of naming the file: resolved as the tool would
        named = (tmp_path / "b" / call.args["file"].removeprefix("file://")).resolve()
        return contents.get(str(named), "missing") if call.args["mode"] == "read" else "a file"

    assert {a.control.args["mode"] for a in plan.attacks} == {"stat", "read"}
    finding = _judge(own, theirs, plan, answer)
    assert finding.verdict is Verdict.LEAKED, finding


def test_a_job_keyed_tool_that_echoes_the_job_is_compared_with_the_job_aside(tmp_path: Path) -> None:
    """`get_output` answering only a size, with the job's name in front: A's file answered as B's own once each
    job's name is taken out as its path is (the job is what the call typed, not what the file holds)."""
    own = Target("own_file", tmp_path / "b" / "own.txt", "BOUNDARY-0000000000000000b0b0")
    theirs = [Target("saved_output", tmp_path / "a" / "out.txt", "BOUNDARY-0000000000000000a0a0")]
    names = JobNames(own="job-b", theirs="job-a")
    (plan,) = plan_tools(["get_output"], {"get_output": GET_OUTPUT}, own, theirs, tmp_path / "b", names=names)
    files = {("job-b", str(own.path)), ("job-a", str(theirs[0].path))}

    def answer(call: Any) -> str:
        job = call.args["job"]
        return f"{job}: 30 bytes" if (job, call.args["path"]) in files else "not found"

    finding = _judge(own, theirs, plan, answer)
    assert finding.verdict is Verdict.LEAKED and "was answered as B's own file" in finding.detail, finding


def test_a_value_its_slot_refuses_is_never_sent_and_a_tool_no_value_fits_is_called_bare(tmp_path: Path) -> None:
    """Claude Code's ReportFindings takes a `category` of at most 40 characters: a path there is the harness's own
    malformed call (an InputValidationError in every answer), never a read. Only the forms that fit are sent;
    a tool whose every string refuses them all is called once, its answer searched."""
    own, theirs, _ = _setup(tmp_path)
    short = {"type": "string", "maxLength": 12}
    mixed = {"type": "object", "properties": {"file": {"type": "string"}, "category": short}, "required": ["file"]}
    (plan,) = plan_tools(["report"], {"report": mixed}, own, theirs, tmp_path / "b")
    aimed = {(a.slot, a.form) for a in plan.attacks}
    assert ("file",) in {slot for slot, _ in aimed}
    assert all(len(a.probe.args.get("category", "")) <= 12 for a in plan.attacks), plan.attacks
    assert ("category",) not in {slot for slot, form in aimed if form != "relative"}
    named = {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}}, "required": ["id"]}
    (bare,) = plan_tools(["lookup"], {"lookup": named}, own, theirs, tmp_path / "b")
    assert bare.attacks == [] and bare.bare is not None and bare.bare.args == {"id": FILLER}, bare
