"""Cross-job reads: a second job on the same account and repository must not reach the first job's data.

Incident 1 (shared opencode data directory) and incident 4 (a sandbox that
confines nothing): every target × channel must be DENIED by some layer, with
the channel's control proving the probe could have worked.
"""

from __future__ import annotations

import pytest

from boundary.crossjob import ProbeResult
from boundary.plugin import scenario_id
from boundary.probes import MATRIX, TARGETS


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    prefix = scenario_id(metafunc.config)
    if {"target", "channel"} <= set(metafunc.fixturenames):
        ids = [f"{prefix}-{channel}-{target}" for target, channel in MATRIX]
        metafunc.parametrize(("target", "channel"), MATRIX, ids=ids)
    elif "written_target" in metafunc.fixturenames:
        metafunc.parametrize("written_target", list(TARGETS), ids=[f"{prefix}-{t}" for t in TARGETS])


def _verdict(results: dict[tuple[str, str], ProbeResult], target: str, channel: str) -> ProbeResult:
    result = results.get((target, channel))
    assert result is not None, f"no result for {target} via {channel}: the scenario did not probe it (INCONCLUSIVE)"
    return result


@pytest.mark.live
def test_cross_job_read(cross_job: dict[tuple[str, str], ProbeResult], target: str, channel: str) -> None:
    """Job B cannot get job A's target back through the channel; some layer denied it."""
    result = _verdict(cross_job, target, channel)
    assert result.verdict == "DENIED", f"{result.verdict}: {result.detail}"


@pytest.mark.live
def test_cross_job_output(cross_job: dict[tuple[str, str], ProbeResult], written_target: str) -> None:
    """Nothing job B printed or wrote holds job A's canary."""
    result = _verdict(cross_job, written_target, "job_output")
    assert result.verdict == "DENIED", f"{result.verdict}: {result.detail}"
