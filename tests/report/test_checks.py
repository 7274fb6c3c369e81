"""Offered-tools check, network trace reading, and the run record's pass rule and summary."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boundary.host.health import checks_for
from boundary.jobs.nettrace import read_trace
from boundary.report.offered import OfferedTools
from boundary.report.passrule import failures, passed
from boundary.report.record import RunRecord, ScenarioRecord
from boundary.report.terminal import summary_lines
from boundary.results import JobReport, ProbeResult

EXPECTED = frozenset({"bash", "read"})


def test_offered_exactly_expected_passes() -> None:
    check = OfferedTools(EXPECTED, EXPECTED, ("opencode_*",))
    assert check.passed and "exactly" in check.explain()


def test_offered_new_tool_fails_with_the_difference() -> None:
    check = OfferedTools(EXPECTED, (EXPECTED | {"opencode_session_move"}) - {"read"}, ("opencode_*",))
    assert not check.passed
    assert check.added == ["opencode_session_move"] and check.missing == ["read"]
    assert check.forbidden == ["opencode_session_move"]
    assert "added: opencode_session_move" in check.explain() and "missing: read" in check.explain()


def test_forbidden_tool_fails_even_when_expected() -> None:
    check = OfferedTools(EXPECTED | {"opencode_models"}, EXPECTED | {"opencode_models"}, ("opencode_*",))
    assert not check.passed and check.forbidden == ["opencode_models"]


def test_nothing_offered_is_inconclusive() -> None:
    check = OfferedTools(EXPECTED, frozenset(), ())
    assert not check.passed and "INCONCLUSIVE" in check.explain()


TRACE = """\
26 connect(20, {sa_family=AF_INET, sin_port=htons(4010), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS
13 connect(20, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
11 sendto(13, [{nlmsg_len=20}], 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20
"""


def test_trace_with_only_the_model_is_clean(tmp_path: Path) -> None:
    (tmp_path / "t").write_text(TRACE)
    use = read_trace(tmp_path / "t")
    assert use.clean and use.unix == {"/var/run/nscd/socket"}


def test_failed_dns_attempt_is_still_a_finding(tmp_path: Path) -> None:
    """An attempt that the empty namespace refused still shows the agent tried to phone home."""
    dns = (
        '13 connect(20, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.53")}, 16)'
        " = -1 ENETUNREACH\n"
    )
    v6 = (
        "9 connect(3, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0),"
        ' inet_pton(AF_INET6, "2001:db8::1", &sin6_addr)}, 28) = -1\n'
    )
    (tmp_path / "t").write_text(TRACE + dns + v6)
    use = read_trace(tmp_path / "t")
    assert not use.clean and use.foreign == ["10.0.0.53:53", "[2001:db8::1]:443"]


def result(verdict: str, layer: str = "runner plugin", channel: str = "read") -> ProbeResult:
    proof = "refused" if verdict == "DENIED" else ""
    return ProbeResult(
        "cross_job", "opencode", "srt", "reference", "saved_output", channel, verdict, layer, "d", 0.1, proof
    )


PLANNED = [("saved_output", "read"), ("saved_output", "grep")]


def record(*results: ProbeResult, tools: frozenset[str] = EXPECTED, traced: bool = True, tmp: Path) -> RunRecord:
    run = RunRecord("reference", {"opencode": "srt"}, planned=["cross_job"], versions={"opencode": "1.18.33"})
    run.add(unit("cross_job", results, tmp, tools=tools, traced=traced))
    return run


def unit(
    name: str,
    results: Sequence[ProbeResult],
    tmp: Path,
    *,
    tools: frozenset[str] = EXPECTED,
    traced: bool = True,
    agent: str = "",
) -> ScenarioRecord:
    """A unit whose every other check holds; `cross_job` claims the runner plugin and checks the layers."""
    (tmp / "t").write_text(TRACE)
    job = JobReport(f"{name}.job-b", 9.5, sorted(tools), 0, [], network=read_trace(tmp / "t") if traced else None)
    layers = name.endswith("cross_job")
    planned = [(r.target, r.channel) for r in results] if not layers else PLANNED
    scenario = ScenarioRecord(name, name, planned, ["runner plugin"] if layers else [], layers, agent=agent)
    scenario.results.extend(results)
    scenario.jobs.append(job)
    scenario.offered = OfferedTools(EXPECTED, tools, ())
    checks = {check: {"ok": True} for check in checks_for("namespace")}
    scenario.host = {"mode": "namespace", "boot_s": 0.2, "samples": 3, "checks": checks, "chain": []}
    return scenario


def both(verdict: str = "DENIED", layer: str = "runner plugin") -> list[ProbeResult]:
    return [result(verdict, layer), result("DENIED", layer, channel="grep")]


def test_all_denied_passes_and_the_table_shows_the_layer(tmp_path: Path) -> None:
    run = record(*both(), tmp=tmp_path)
    assert run.passed()
    text = "\n".join(summary_lines(run.as_dict()))
    assert "== cross_job" in text and "saved_output" in text and "plugin" in text and "RESULT: PASS" in text


def test_any_failing_verdict_fails(tmp_path: Path) -> None:
    for verdict in ("LEAKED", "INCONCLUSIVE", "TAMPERED", "WRITTEN", "EXECUTED"):
        run = record(*both(verdict), tmp=tmp_path)
        assert not run.passed()
        assert f"{verdict}: saved_output via read" in "\n".join(summary_lines(run.as_dict()))


def test_a_planned_cell_without_a_result_fails(tmp_path: Path) -> None:
    """A report that lacks a planned probe is not a pass: absent evidence proves nothing."""
    run = record(result("DENIED"), tmp=tmp_path)
    assert not run.passed()
    assert any("planned probes have no result" in reason for reason in failures(run.as_dict()))


def test_a_planned_scenario_missing_from_the_report_fails(tmp_path: Path) -> None:
    run = record(*both(), tmp=tmp_path)
    run.planned.append("tamper")
    assert "scenario tamper not reported" in failures(run.as_dict())


def test_silent_claimed_layer_fails(tmp_path: Path) -> None:
    run = record(*both(layer="OS sandbox"), tmp=tmp_path)
    assert "cross_job: layer runner plugin denied nothing in any scenario" in failures(run.as_dict())
    assert "layers that denied (here/in the run): plugin 0/0 ✗" in summary_lines(run.as_dict())


def test_a_layer_that_denies_only_in_another_unit_of_its_agent_is_seen_working(tmp_path: Path) -> None:
    """A layer that guards only the network denies in `reach`, not in cross_job: the run holds (it read "denied
    nothing" when only cross_job's cells counted). Another agent's unit, or another machine's, shows nothing."""
    run = RunRecord("reference", {"opencode": "srt"}, planned=["opencode/cross_job", "opencode/reach"])
    run.add(unit("opencode/cross_job", both(layer="OS sandbox"), tmp_path, agent="opencode"))
    network = ProbeResult(
        "reach", "opencode", "srt", "reference", "api", "shell", "DENIED", "runner plugin", "d", 0.1, "refused"
    )
    run.add(unit("opencode/reach", [network], tmp_path, agent="opencode"))
    assert run.passed(), failures(run.as_dict())
    assert "layers that denied (here/in the run): plugin 0/1" in summary_lines(run.as_dict())
    report = run.as_dict()
    report["scenarios"]["opencode/reach"]["agent"] = "claude"
    assert "opencode/cross_job: layer runner plugin denied nothing in any opencode scenario of this run" in failures(
        report
    )
    report["scenarios"]["opencode/reach"] |= {"agent": "opencode", "machine": "another"}
    assert not passed(report)


def test_a_run_where_no_unit_checks_the_layers_says_so(tmp_path: Path) -> None:
    run = RunRecord("reference", {"opencode": "srt"}, planned=["reach"])
    run.add(unit("reach", [result("DENIED")], tmp_path))
    lines = summary_lines(run.as_dict())
    assert run.passed() and any(line.startswith("layers: not checked") for line in lines)
    assert not any(
        line.startswith("layers: not checked") for line in summary_lines(record(*both(), tmp=tmp_path).as_dict())
    )


def test_a_runner_claiming_no_layer_fails(tmp_path: Path) -> None:
    report = record(*both(), tmp=tmp_path).as_dict()
    report["scenarios"]["cross_job"]["layers"] = {}
    assert any("claims no layer" in reason for reason in failures(report))


def test_untraced_job_or_no_results_fail(tmp_path: Path) -> None:
    assert not record(*both(), traced=False, tmp=tmp_path).passed()
    assert not record(tmp=tmp_path).passed()


def test_workers_reports_merge_into_one(tmp_path: Path) -> None:
    """pytest-xdist: each worker reports its scenarios; the controller's record holds them all."""
    worker = record(*both(), tmp=tmp_path)
    controller = RunRecord("reference", {"opencode": "srt"}, planned=["cross_job"])
    controller.merge(json.loads(json.dumps(worker.as_dict())))
    assert controller.passed() and controller.versions == {"opencode": "1.18.33"}


def test_a_scenario_from_two_workers_fails_the_run(tmp_path: Path) -> None:
    """Two workers ran one scenario at once (xdist lost its grouping): their jobs saw each other, so it fails."""
    part = json.loads(json.dumps(record(*both(), tmp=tmp_path).as_dict()))
    controller = RunRecord("reference", {"opencode": "srt"}, planned=["cross_job"])
    controller.merge(part)
    assert controller.passed()
    controller.merge(part)
    assert not controller.passed()
    assert any("cross_job ran in two xdist workers" in reason for reason in failures(controller.as_dict()))


def test_json_report_has_the_documented_shape(tmp_path: Path) -> None:
    run = record(*both(), tmp=tmp_path)
    run.write_json(tmp_path / "r.json")
    data = json.loads((tmp_path / "r.json").read_text())
    assert set(data["run"]) >= {"versions", "host", "agents", "started", "duration_s", "planned_scenarios", "errors"}
    scenario = data["scenarios"]["cross_job"]
    assert set(scenario) == {
        *(
            "title",
            "agent",
            "not_applicable",
            "not_offered",
            "not_planted",
            "planned",
            "results",
            "jobs",
            "offered_tools",
            "checks_layers",
            "layers",
            "host",
        ),
        "errors",
        "verb_writes",
        "wall_s",
    }
    assert set(scenario["results"][0]) == {
        "scenario",
        "agent",
        "sandbox",
        "runner",
        "target",
        "channel",
        "verdict",
        "layer",
        "detail",
        "duration_s",
        "proof",
    }
    assert set(scenario["jobs"][0]) >= {"name", "wall_s", "offered_tools"}


def test_bench_summary_reads_the_reports() -> None:
    from boundary.suite.bench import percentile, summarise

    job = {"wall_s": 5.0, "model_latencies_s": [0.001, 0.002, 0.010]}
    scenario = {"jobs": [job, job], "results": [{"channel": "read"}, {"channel": "job_output"}]}
    report = {"scenarios": {"cross_job": scenario}}
    lines = summarise([20.0, 30.0], [report, report])
    assert "median 25.0 s" in lines[1] and "jobs' critical path: median 10.0 s" in lines[2]  # no start times: summed
    assert "harness:     median 58% of wall time" in lines[3] and "12 requests" in lines[4]
    assert percentile([1.0, 2.0, 3.0], 0.5) == 2.0
    assert lines[5] == "host: not reported"
    cost = {"cheap_sample_ms": 14.0, "full_sample_ms": 20.0, "watchdog_share": 0.03}
    hosted = {"scenarios": {"cross_job": {**scenario, "host": {"mode": "container", "boot_s": 0.7, "cost": cost}}}}
    assert summarise([20.0], [hosted])[5] == (
        "host container: boot median 0.70 s; sample median cheap 14.0 ms, full 20.0 ms; watchdog 3.0% of job time"
    )


def test_bench_names_the_check_that_costs_most_beyond_its_floor() -> None:
    """Per check, its wall time beside that of its floor, run right before it (`--boundary-paired-floor`)."""
    from boundary.suite.bench import check_lines

    def check(wall: float, floor: float) -> dict[str, Any]:
        return {"wall_s": wall, "floor": {"wall_s": floor}}

    run = {"scenarios": {"opencode/sweep": check(12.0, 5.0), "claude/tamper": check(5.0, 4.0), "codex/x": {}}}
    lines = check_lines([run])
    assert lines[1].split() == ["opencode/sweep", "12.0", "s", "floor", "5.0", "s", "+7.0", "s", "(2.40×)"]
    assert lines[2].split()[0] == "claude/tamper" and len(lines) == 3  # a check without a floor is not listed


# --- one verdict everywhere: the exit status, the JSON, the terminal, markdown and HTML ---------------------


def finish(run: RunRecord, tmp: Path, exitstatus: int = 0, testsfailed: int = 0) -> tuple[int, dict[str, Any]]:
    """The live suite's controller ending a session with `run` as its record: its exit status, its JSON report."""
    from types import SimpleNamespace

    import pytest

    from boundary.suite import SETTINGS, plugin

    paths = {
        "--boundary-report": tmp / "r.json",
        "--boundary-markdown": tmp / "r.md",
        "--boundary-html": tmp / "r.html",
    }
    config = SimpleNamespace(
        stash={plugin.RUN_KEY: run},
        inipath=SETTINGS,
        option=SimpleNamespace(collectonly=False),
        getoption=lambda name, default=None: paths.get(name, default),
    )
    session = SimpleNamespace(config=config, exitstatus=pytest.ExitCode(exitstatus), testsfailed=testsfailed)
    plugin.pytest_sessionfinish(session)  # type: ignore[arg-type]
    return int(session.exitstatus), json.loads(paths["--boundary-report"].read_text())


def test_a_unit_not_reported_fails_the_exit_status(tmp_path: Path) -> None:
    """Every test that ran passed, but a planned unit never reported (deselected, or its worker died): FAIL, exit 1."""
    run = record(*both(), tmp=tmp_path)
    run.planned.append("tamper")
    status, report = finish(run, tmp_path)
    assert status == 1
    assert failures(report) == ["scenario tamper not reported"]
    assert report["verdict"] == {"passed": False, "failures": ["scenario tamper not reported"]}
    assert "FAIL" in (tmp_path / "r.md").read_text() and '<h1 class="fail">' in (tmp_path / "r.html").read_text()


def test_a_deselected_failing_cell_fails_the_exit_status(tmp_path: Path) -> None:
    """`-k` left out the one test that fails: the report still holds the LEAKED cell, and so does the exit status."""
    status, report = finish(record(*both("LEAKED"), tmp=tmp_path), tmp_path)
    assert status == 1 and not report["verdict"]["passed"]


def test_no_unit_reported_at_all_still_writes_a_failing_report(tmp_path: Path) -> None:
    """The only worker died before it sent anything: the report says so, and the run fails."""
    run = RunRecord("reference", {"opencode": "srt"}, planned=["cross_job"])
    status, report = finish(run, tmp_path)
    assert status == 1 and "scenario cross_job not reported" in report["verdict"]["failures"]


def test_a_failed_test_the_report_does_not_show_fails_the_report_too(tmp_path: Path) -> None:
    status, report = finish(record(*both(), tmp=tmp_path), tmp_path, exitstatus=1, testsfailed=2)
    assert status == 1 and not report["verdict"]["passed"]
    assert any("2 tests failed" in reason for reason in report["verdict"]["failures"])


def test_a_passing_run_exits_0_and_says_pass_everywhere(tmp_path: Path) -> None:
    status, report = finish(record(*both(), tmp=tmp_path), tmp_path)
    assert status == 0 and report["verdict"] == {"passed": True, "failures": []}
    assert "✅" in (tmp_path / "r.md").read_text().splitlines()[0]


def test_a_duplicate_result_for_one_cell_counts_the_worst(tmp_path: Path) -> None:
    """Two results for one cell: the cell holds only if both do — in the live test, the terminal and the pages."""
    from boundary.report.html import to_html
    from boundary.report.markdown import to_markdown

    run = record(*both(), result("LEAKED"), tmp=tmp_path)
    scenario = ScenarioRecord("cross_job", "reads", PLANNED)
    scenario.results.extend([result("DENIED"), result("LEAKED"), result("DENIED")])
    assert scenario.result(("saved_output", "read")).verdict == "LEAKED"  # type: ignore[union-attr]
    report = run.as_dict()
    assert not run.passed()
    matrix = "\n".join(summary_lines(report))
    assert re.search(r"^saved_output\s+LEAKED", matrix, re.M), matrix
    assert "❌ LEAKED" in to_markdown(report).split("**Not denied")[0]
    assert 'data-target="saved_output" data-channel="read" title="saved_output via read: LEAKED' in to_html(report)


def test_a_host_check_not_checked_where_the_host_can_check_it_fails(tmp_path: Path) -> None:
    """A container host runs systemd: `services` not checked there is no pass (the live test says INCONCLUSIVE)."""
    from boundary.report.html import to_html
    from boundary.report.markdown import to_markdown

    run = record(*both(), tmp=tmp_path)
    host = run.scenarios["cross_job"]["host"]
    host |= {"mode": "container", "not_checked": {"services": "systemctl did not answer"}}
    report = run.as_dict()
    assert "cross_job: host services not checked: systemctl did not answer" in failures(report)
    text = "\n".join(summary_lines(report))
    assert "samples): NOT CHECKED — services" in text and "RESULT: FAIL" in text
    assert "- **host health** (container): ❌ services not checked" in to_markdown(report)
    assert "✗ not checked: systemctl did not answer" in to_html(report)


def test_a_host_check_the_host_cannot_run_is_said_not_failed(tmp_path: Path) -> None:
    """A namespace host has no systemd: `services` is not checked there, with the reason, and the run may pass."""
    run = record(*both(), tmp=tmp_path)
    run.scenarios["cross_job"]["host"]["not_checked"] = {"services": "no systemd runs in this host"}
    assert run.passed()
    assert "  not checked: services: no systemd runs in this host" in summary_lines(run.as_dict())
