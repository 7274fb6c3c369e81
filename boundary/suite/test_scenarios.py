"""The live suite, parametrised from every planned scenario (`boundary.scenarios`).

Each unit (a scenario against one agent's runner) runs once, on its own disposable host,
when its first test needs it; its tests then read the one record it left. Test ids read
`test_probe[cross_job-opencode-srt-read-saved_output]`; select with `-k`, `--scenario` or `--agent`.

- probe: every planned cell DENIED by some layer (LEAKED, TAMPERED, WRITTEN, EXECUTED and
  INCONCLUSIVE fail; a cell the scenario left out fails too);
- offered tools (incident 2): the model was sent exactly the tools the runner meant;
- network: every job's process tree reached nothing but the scripted model;
- host (incident 3): the host stayed healthy from the baseline through every job and a resolver restart.

That every layer the runner claims denied at least one probe (incident 4) is the report's check, not a test here: a
layer may deny only in another unit of its agent (one that guards the network, in `reach`), which another worker
runs (boundary.report.passrule.layers_denied).
"""

from __future__ import annotations

from typing import Any

import pytest

from boundary.host.health import checks_for
from boundary.report.record import ScenarioRecord
from boundary.suite.plugin import planned_units, require
from boundary.suite.runs import ScenarioRuns


def _params(metafunc: pytest.Metafunc, second: str | None) -> list[Any]:
    """(unit, second) parameters for every planned unit, grouped so one worker runs a unit."""
    config, mode = metafunc.config, metafunc.config.getoption("--host")
    params: list[Any] = []
    for unit in planned_units(config):
        scenario, runner = unit.scenario, unit.make_runner()
        prefix = f"{runner.agent.name}-{runner.sandbox.name}"
        # One worker per unit; a scenario that searches the host runs all its units in one worker, one by one.
        group_name = scenario.name if scenario.searches_the_host else unit.key.replace("/", "-")
        group, name, key = pytest.mark.xdist_group(group_name), scenario.name, unit.key
        if scenario.not_covered(runner):  # one test, failing with the reason: not covered is no pass
            params += [pytest.param(key, None, marks=group, id=f"{name}-{prefix}-not-covered")] if second else []
            params += [] if second else [pytest.param(key, marks=group, id=f"{name}-{prefix}-not-covered")]
            continue
        if second == "cell":
            params += [
                pytest.param(key, c, marks=group, id=f"{name}-{prefix}-{c[1]}-{c[0]}") for c in scenario.cells(runner)
            ]
        elif second == "check":
            params += [pytest.param(key, c, marks=group, id=f"{name}-{prefix}-{mode}-{c}") for c in checks_for(mode)]
        elif second is None:
            params.append(pytest.param(key, marks=group, id=f"{name}-{prefix}"))
    return params


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario" not in metafunc.fixturenames:
        return
    second = next((name for name in ("cell", "check") if name in metafunc.fixturenames), None)
    if second is None:
        metafunc.parametrize("scenario", _params(metafunc, None))
        return
    metafunc.parametrize(("scenario", second), _params(metafunc, second))


def _ran(runs: ScenarioRuns, name: str) -> ScenarioRecord:
    record = runs.get(name)
    if record.not_started is not None:  # one failure for the unit; its other tests would only repeat it
        if not runs.first_to_tell(name):
            pytest.skip(f"{name} did not run: its jobs did not start (its first test and the report say why)")
        pytest.fail("; ".join(record.errors), False)
    require(not record.errors, "; ".join(record.errors) + " (INCONCLUSIVE)")
    return record


@pytest.mark.live
def test_probe(boundary_runs: ScenarioRuns, scenario: str, cell: tuple[str, str]) -> None:
    """The scenario's probe of this target through this channel was DENIED by some layer."""
    record = _ran(boundary_runs, scenario)
    result = record.result(cell)
    if result is None and cell[0] in record.not_planted:  # the report says so too; never counted as held
        pytest.skip(f"not planted: {cell[0]}: {record.not_planted[cell[0]]}")
    if result is None:
        pytest.fail(f"no result for {cell[0]} via {cell[1]}: the scenario did not probe it (INCONCLUSIVE)", False)
    require(result.verdict == "DENIED", f"{result.verdict}: {result.detail}")


@pytest.mark.live
def test_offered_tools(boundary_runs: ScenarioRuns, scenario: str) -> None:
    """Every request offered the expected tools, nothing more, and nothing forbidden."""
    offered = _ran(boundary_runs, scenario).offered
    if offered is None:
        pytest.fail("the offered tools were not recorded (INCONCLUSIVE)", False)
    require(offered.passed, offered.explain())


@pytest.mark.live
def test_jobs_reach_only_the_model(boundary_runs: ScenarioRuns, scenario: str) -> None:
    """Every job's process tree connected or sent to nothing but the scripted model."""
    jobs = _ran(boundary_runs, scenario).jobs
    require(jobs, "no job ran: nothing shows the network was left alone (INCONCLUSIVE)")
    for job in jobs:
        if job.network is None:
            pytest.fail(f"job {job.name} was not traced: its network use is unknown (INCONCLUSIVE)", False)
        require(job.network.clean, f"job {job.name} {job.network.explain()}")


@pytest.mark.live
def test_host_healthy(boundary_runs: ScenarioRuns, scenario: str, check: str) -> None:
    """The check held from the baseline through every job and the resolver's restart."""
    host = _ran(boundary_runs, scenario).host
    if host is None:
        pytest.fail("host health was not recorded (INCONCLUSIVE)", False)
    require(host["samples"] >= 2, "the host was sampled fewer than twice: nothing compared (INCONCLUSIVE)")
    why_not = (host.get("not_checked") or {}).get(check)
    require(why_not is None, f"{check} cannot be checked on this host: {why_not} (INCONCLUSIVE)")
    state = host["checks"].get(check)
    require(state is not None, f"{check} has no result in the host report (INCONCLUSIVE)")
    chain = "; then ".join(host["chain"])
    require(state["ok"], f"{check} first failed {state.get('first_failed')}: {state.get('detail')} (in order: {chain})")
