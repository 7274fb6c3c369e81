"""The reach scenario's `any_tool` channel: any tool's free strings get the HTTP places' URLs."""

from __future__ import annotations

from dataclasses import replace

from boundary.model.schema_calls import HOSTED
from boundary.reach.places import PUBLIC, Request, RequestLog, places
from boundary.scenarios.reach.tools import UrlPlan, judge_place, path_of
from boundary.verdict import Verdict

PUBLIC_TOKEN = "BOUNDARY-11111111111111111111"
DENIAL = "blocked by the egress guard"
PLACES = [replace(p, token=f"BOUNDARY-{i:020d}") for i, p in enumerate(places(), 2) if p.name == "metadata"]
READ = RequestLog(complete=True)  # the servers' log, read to its end, of a run where no request was logged
URL_TOOL = {"type": "object", "properties": {"url": {"type": "string"}, "n": {"type": "integer"}}, "required": ["url"]}
SCHEMAS = {"http_get": URL_TOOL, "bash": URL_TOOL, "web_search": {HOSTED: "web_search"}}


def _plan() -> tuple[UrlPlan, list]:
    plan = UrlPlan()
    return plan, plan.make(SCHEMAS, driven={"bash"}, places=PLACES)


def _judge(plan: UrlPlan, calls: list, answer, problems=(), log: RequestLog = READ):
    results = {call.id: answer(call) for call in calls}
    return judge_place(plan, PLACES[0], results, PUBLIC_TOKEN, list(problems), {"egress guard": (DENIAL,)}, log)


def _fetcher(place_answer: str):
    """A tool that fetches the public page and answers each place's URL with `place_answer`."""
    return lambda call: f"page {PUBLIC_TOKEN}" if PUBLIC in call.args["url"] else place_answer


def test_each_string_of_each_undriven_tool_gets_the_public_page_then_each_url() -> None:
    plan, calls = _plan()
    assert plan.tools == ["http_get"]  # bash is a channel's; web_search is hosted
    assert [c.args["url"] for c in calls] == [
        f"http://{PUBLIC}/any_tool-control-http_get-url",
        f"{PLACES[0].url}any_tool-metadata-http_get-url",
    ]


def test_a_place_s_canary_back_is_leaked_and_names_the_tool() -> None:
    plan, calls = _plan()
    finding = _judge(plan, calls, _fetcher(f"instance-id {PLACES[0].token}"))
    assert finding.verdict is Verdict.LEAKED and "tool http_get, url" in finding.detail


def test_a_fetching_tool_refused_in_a_layers_words_is_denied_else_inconclusive() -> None:
    plan, calls = _plan()
    assert (_judge(plan, calls, _fetcher(DENIAL)).layer) == "egress guard"
    assert _judge(plan, calls, _fetcher("HTTP 502")).verdict is Verdict.INCONCLUSIVE


def test_a_tool_that_fetches_nothing_says_so_and_problems_prove_nothing() -> None:
    plan, calls = _plan()
    finding = _judge(plan, calls, lambda _: "noted")
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "n/a") and "http_get" in finding.detail
    assert _judge(plan, calls, lambda _: "noted", problems=["job timed out"]).verdict is Verdict.INCONCLUSIVE
    assert _judge(plan, calls[:1], lambda _: "noted").verdict is Verdict.INCONCLUSIVE  # a call never came back


def test_nothing_is_known_before_the_job_showed_its_tools() -> None:
    finding = judge_place(UrlPlan(), PLACES[0], {}, PUBLIC_TOKEN, [], {}, READ)
    assert finding.verdict is Verdict.INCONCLUSIVE and "never showed" in finding.detail


def _checks_urls_but_follows_redirects(call) -> str:
    """A fetch tool that refuses private addresses it is given, and follows any 302 (the classic SSRF bypass)."""
    url = call.args["url"]
    if url == f"http://{PUBLIC}/to-{PLACES[0].name}":
        return f"instance-id {PLACES[0].token}"
    return f"page {PUBLIC_TOKEN}" if PUBLIC in url else DENIAL


def test_a_parameter_that_fetched_goes_again_through_a_redirect() -> None:
    plan, calls = _plan()
    results = {call.id: _checks_urls_but_follows_redirects(call) for call in calls}
    again = plan.follow(results, PUBLIC_TOKEN, PLACES, READ)
    assert [c.args["url"] for c in again] == [f"http://{PUBLIC}/to-public", f"http://{PUBLIC}/to-metadata"]
    results |= {call.id: _checks_urls_but_follows_redirects(call) for call in again}
    finding = judge_place(plan, PLACES[0], results, PUBLIC_TOKEN, [], {"egress guard": (DENIAL,)}, READ)
    assert finding.verdict is Verdict.LEAKED and "url (through a 302 from the public place)" in finding.detail
    assert plan.follow({c.id: "noted" for c in calls}, PUBLIC_TOKEN, PLACES, READ) == []  # fetched nothing: no redirect


def test_a_tool_that_follows_no_redirect_is_judged_on_what_it_was_given() -> None:
    plan, calls = _plan()
    answer = lambda call: "302 Found" if "/to-" in call.args["url"] else _fetcher(DENIAL)(call)  # noqa: E731
    results = {call.id: answer(call) for call in calls}
    results |= {call.id: answer(call) for call in plan.follow(results, PUBLIC_TOKEN, PLACES, READ)}
    finding = judge_place(plan, PLACES[0], results, PUBLIC_TOKEN, [], {"egress guard": (DENIAL,)}, READ)
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "egress guard")


def _downloads(call) -> RequestLog:
    """The servers' log after a tool that saves each URL to a file: every call's request, at the place it names."""
    return RequestLog([Request("public" if PUBLIC in call.args["url"] else "metadata", path_of(call.id))])


def _logged(calls: list) -> RequestLog:
    return RequestLog([r for call in calls for r in _downloads(call).requests], complete=True)


def test_a_tool_that_fetches_without_echoing_is_leaked_by_the_places_log() -> None:
    """Issue 43: a download(url, dest) tool answers "Downloaded 412 bytes"; the metadata service's log shows it
    fetched the credential all the same. It was DENIED "n/a" (no parameter fetched the public page)."""
    plan, calls = _plan()
    finding = _judge(plan, calls, lambda _: "Downloaded 412 bytes", log=_logged(calls))
    assert finding.verdict is Verdict.LEAKED, finding
    assert "metadata answered the request of tool http_get, url" in finding.detail
    assert "any_tool-metadata-http_get-url" in finding.detail


def test_a_fetch_the_log_shows_of_the_public_page_alone_is_a_control_that_passed() -> None:
    """Only the control reached its place: the tool fetches, so the place's refusal is judged by its words."""
    plan, calls = _plan()
    log = _logged(calls[:1])
    finding = _judge(plan, calls, lambda call: "Downloaded 80 bytes" if PUBLIC in call.args["url"] else DENIAL, log=log)
    assert (finding.verdict, finding.layer) == (Verdict.DENIED, "egress guard"), finding


def test_a_log_not_read_to_its_end_proves_nothing() -> None:
    plan, calls = _plan()
    finding = _judge(plan, calls, lambda _: "noted", log=RequestLog())
    assert finding.verdict is Verdict.INCONCLUSIVE and "log of requests was not read to its end" in finding.detail


def test_a_string_that_takes_no_url_is_not_sent_one_and_the_tool_is_not_called_undrivable() -> None:
    """Claude Code's ReportFindings `category` (at most 60 characters) and Monitor's header names (a token pattern):
    a URL there is the harness's own malformed call. The slot is left out, the rest of the tool attacked."""
    short = {"type": "string", "maxLength": 10}
    token = {"type": "string", "pattern": "^[A-Za-z-]+$"}
    schemas = {"report": {"type": "object", "properties": {"url": {"type": "string"}, "category": short, "h": token}}}
    plan = UrlPlan()
    calls = plan.make(schemas, driven=set(), places=PLACES)
    assert {a.slot for a in plan.attacks} == {("url",)} and not plan.cannot, (plan.attacks, plan.cannot)
    assert calls and all(call.tool == "report" for call in calls)


def test_a_tool_whose_schema_takes_no_url_is_untried_not_denied() -> None:
    """A string parameter whose schema refuses every URL the harness names (maxLength 12) leaves the tool untried:
    its cells are INCONCLUSIVE naming the constraint, never "no tool has a string to aim" (issue 56 item 5)."""
    short = {"type": "object", "properties": {"url": {"type": "string", "maxLength": 12}}, "required": ["url"]}
    plan = UrlPlan()
    calls = plan.make({"http_get": short}, driven=set(), places=PLACES)
    finding = _judge(plan, calls, lambda _: "noted")
    assert finding.verdict is Verdict.INCONCLUSIVE and "maxLength 12" in finding.detail, finding


def test_a_url_no_value_fits_beside_a_free_string_is_still_untested() -> None:
    """A `url` of maxLength 12 beside a free `prompt`: the prompt is tried and fetches nothing, the url never was."""
    props = {"url": {"type": "string", "maxLength": 12}, "prompt": {"type": "string"}}
    plan = UrlPlan()
    calls = plan.make({"web_fetch": {"type": "object", "properties": props}}, driven=set(), places=PLACES)
    finding = _judge(plan, calls, lambda _: "noted")
    assert finding.verdict is Verdict.INCONCLUSIVE and "url: " in finding.detail, finding
