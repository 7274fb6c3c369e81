"""A verdict depends on the runner, not on this machine's files: the same run passes on the /etc/hosts files users'
hosts have, and with IPv6 off (each put into the namespace host by `--host-etc`/`--host-ipv6`, never on this machine).

`reach` is the scenario whose jobs look names up (srt's proxy settings name `localhost`; its probes try `localhost`
and `::1`): with a stock Debian file it once failed the network check for opencode and Claude Code. The whole default
run, every agent's, passes in the README's quick start under a clean Debian root's own file (test_fresh_machine.py:
its pass rule holds every cell DENIED with proof, every job's network clean, the host healthy, every layer seen).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from live import run_suite, stock_hosts

from boundary.suite import pytest_args

pytestmark = pytest.mark.live


@pytest.mark.parametrize(
    ("hosts", "ipv6"),
    [("debian", "on"), ("ubuntu", "on"), ("ipv4-only", "on"), ("debian", "off")],
    ids=["debian", "ubuntu", "no-ipv6-line", "ipv6-off"],
)
def test_reach_passes_for_every_agent_whatever_the_hosts_file(
    pytester: pytest.Pytester, tmp_path: Path, hosts: str, ipv6: str
) -> None:
    options = ("--host-etc", f"hosts={stock_hosts(hosts, tmp_path)}", "--host-ipv6", ipv6, "--scenario", "reach")
    result, report = run_suite(pytester, *options)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert set(report["scenarios"]) == {f"{agent}/reach" for agent in ("opencode", "claude", "codex")}
    for part in report["scenarios"].values():
        assert all(job["network"]["clean"] for job in part["jobs"]), part["jobs"]


def test_a_host_variant_on_another_host_kind_is_a_usage_error(pytester: pytest.Pytester, tmp_path: Path) -> None:
    options = ("--host", "live", "--host-ipv6", "off", "--scenario", "reach")
    result = pytester.runpytest_subprocess(*pytest_args(), *options)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--host-etc and --host-ipv6 apply to --host namespace only*"])
