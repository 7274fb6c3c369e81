"""Cross-job reads: a second job on the same account and repository must not reach the first job's data.

Incident 1 (shared opencode data directory) and incident 4 (a sandbox that
confines nothing): every target × channel must be DENIED by some layer, with
the channel's control proving the probe could have worked; and every layer
the runner claims must be seen denying something.
"""

from __future__ import annotations

import pytest

from boundary.crossjob import ProbeResult
from boundary.plugin import RUNNER_KEY, require, scenario_id
from boundary.probes import MATRIX, TARGETS
from boundary.report import RunRecord


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    prefix = scenario_id(metafunc.config)
    if {"target", "channel"} <= set(metafunc.fixturenames):
        ids = [f"{prefix}-{channel}-{target}" for target, channel in MATRIX]
        metafunc.parametrize(("target", "channel"), MATRIX, ids=ids)
    elif "written_target" in metafunc.fixturenames:
        metafunc.parametrize("written_target", list(TARGETS), ids=[f"{prefix}-{t}" for t in TARGETS])
    elif "layer" in metafunc.fixturenames:
        layers = list(metafunc.config.stash[RUNNER_KEY].denials)
        metafunc.parametrize("layer", layers, ids=[f"{prefix}-{layer.replace(' ', '_')}" for layer in layers])


def _verdict(results: dict[tuple[str, str], ProbeResult], target: str, channel: str) -> ProbeResult:
    result = results.get((target, channel))
    require(result is not None, f"no result for {target} via {channel}: the scenario did not probe it (INCONCLUSIVE)")
    return result


@pytest.mark.live
def test_cross_job_read(cross_job: dict[tuple[str, str], ProbeResult], target: str, channel: str) -> None:
    """Job B cannot get job A's target back through the channel; some layer denied it."""
    result = _verdict(cross_job, target, channel)
    require(result.verdict == "DENIED", f"{result.verdict}: {result.detail}")


@pytest.mark.live
def test_cross_job_output(cross_job: dict[tuple[str, str], ProbeResult], written_target: str) -> None:
    """Nothing job B printed or wrote holds job A's canary."""
    result = _verdict(cross_job, written_target, "job_output")
    require(result.verdict == "DENIED", f"{result.verdict}: {result.detail}")


@pytest.mark.live
def test_layer_denies(cross_job: object, boundary_record: RunRecord, layer: str) -> None:
    """A layer the runner claims is shown working: it denied at least one probe.

    Other layers may still hold every probe, but a layer that silently stopped
    working is defence lost, and the run says so.
    """
    count = boundary_record.layer_counts()[layer]
    require(count > 0, f"the runner claims the layer {layer!r}, but it denied none of the probes")
