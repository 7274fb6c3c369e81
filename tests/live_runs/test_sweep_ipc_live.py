"""Live control for the sweep's kernel objects (issue 16, item 13): a runner whose launcher shares the host's IPC
namespace between jobs fails on System V shared memory and message queues and POSIX message queues, each named."""

from __future__ import annotations

import pytest
from live import run_suite

from tests.live_runs.test_controls import scenario

pytestmark = pytest.mark.live


def test_a_shared_ipc_namespace_lets_job_b_read_job_as_kernel_objects(pytester: pytest.Pytester) -> None:
    """Job A holds a segment, a queue and a POSIX queue, each carrying its canary; job B reaches every one of them
    by key or name. Every file place still holds as the reference runner's do: only the kernel objects leak."""
    runner = "boundary.sabotage.ipc:SharesIpc"
    result, report = run_suite(pytester, "--agent", "opencode", "--scenario", "sweep", "--runner", runner)
    assert result.ret == 1
    cells = {(r["target"], r["channel"]): r for r in scenario(report, "sweep")["results"]}
    for kind in ("sysv_shm", "sysv_msg", "posix_mqueue"):
        leaked = cells.pop((f"ipc/{kind}", "shell_sweep"))
        assert leaked["verdict"] == "LEAKED" and f"job B reached job A's {kind}" in leaked["detail"], leaked
    assert {cell: r["verdict"] for cell, r in cells.items() if r["verdict"] != "DENIED"} == {}
    result.stdout.fnmatch_lines(["*LEAKED: ipc/sysv_shm via shell_sweep: job B reached job A's sysv_shm*"])
