"""Host health: the jobs leave the host healthy (incident 3).

codex-action's drop-sudo chmod'ed root-owned sockets under /run; root still
reached the bus, DNS still answered, until systemd-resolved restarted and
could not reach the bus — then DNS died machine-wide. So each check runs
before the jobs, a couple of times a second while they run, after each, and
once more after the harness restarts systemd-resolved as systemd would.
"""

from __future__ import annotations

import pytest

from boundary.host.health import CHECKS, HostHealth
from boundary.plugin import require, scenario_id


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "check" in metafunc.fixturenames:
        prefix = f"{scenario_id(metafunc.config)}-{metafunc.config.getoption('--host')}"
        metafunc.parametrize("check", CHECKS, ids=[f"{prefix}-{check}" for check in CHECKS])


@pytest.mark.live
def test_host_healthy(host_health: HostHealth, check: str) -> None:
    """The check held from the baseline through every job and the resolver's restart."""
    require(host_health.samples >= 2, "the host was sampled fewer than twice: nothing compared (INCONCLUSIVE)")
    failure = host_health.failures.get(check)
    chain = "; then ".join(f"{f.check} {f.when}" for f in host_health.chain())
    require(
        failure is None, f"{check} first failed {failure.when}: {failure.detail} (in order: {chain})" if failure else ""
    )
