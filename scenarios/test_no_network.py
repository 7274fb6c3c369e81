"""No job touches the network: agents phone home by default (model catalogs, plugin installs, telemetry).

Each job runs in its own network namespace with only loopback, and strace
records every inet destination of its whole process tree; only the scripted
model's bridge may appear.
"""

from __future__ import annotations

import pytest

from boundary.plugin import require, scenario_id
from boundary.session import Session


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "agent_sandbox" in metafunc.fixturenames:
        metafunc.parametrize("agent_sandbox", [scenario_id(metafunc.config)])


@pytest.mark.live
def test_jobs_reach_only_the_model(cross_job: object, boundary_session: Session, agent_sandbox: str) -> None:
    """Every job's process tree connected or sent to nothing but the scripted model."""
    require(boundary_session.jobs, "no job ran: nothing shows the network was left alone (INCONCLUSIVE)")
    for job in boundary_session.jobs:
        require(job.network is not None, f"job {job.name} was not traced: its network use is unknown (INCONCLUSIVE)")
        require(job.network.clean, f"job {job.name} {job.network.explain()}")
