"""Host health: the jobs leave the host healthy (incident 3).

codex-action's drop-sudo chmod'ed root-owned sockets under /run; root still
reached the bus, DNS still answered, until systemd-resolved restarted and
could not reach the bus — then DNS died machine-wide. So each check runs
before the jobs, a couple of times a second while they run, after each, and
once more after the harness restarts systemd-resolved as systemd would.
"""

from __future__ import annotations

import pytest

from boundary.host.health import HostHealth, checks_for, not_applicable
from boundary.plugin import require, scenario_id


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "check" in metafunc.fixturenames:
        mode = metafunc.config.getoption("--host")
        checks = checks_for(mode)
        metafunc.parametrize(
            "check", checks, ids=[f"{scenario_id(metafunc.config)}-{mode}-{check}" for check in checks]
        )


@pytest.mark.live
def test_host_healthy(host_health: HostHealth, check: str) -> None:
    """The check held from the baseline through every job and the resolver's restart."""
    require(host_health.samples >= 2, "the host was sampled fewer than twice: nothing compared (INCONCLUSIVE)")
    why_not = not_applicable(host_health.baseline).get(check)
    require(why_not is None, f"{check} cannot be checked on this host: {why_not} (INCONCLUSIVE)")
    failure = host_health.failures.get(check)
    chain = "; then ".join(f"{f.check} {f.when}" for f in host_health.chain())
    require(
        failure is None, f"{check} first failed {failure.when}: {failure.detail} (in order: {chain})" if failure else ""
    )
