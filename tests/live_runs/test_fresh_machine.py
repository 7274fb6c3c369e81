"""The README's quick start, literally, on a clean Debian 12 root: what a new user's machine has.

The commands are read from the README, so the two cannot drift. The root's /etc/hosts, resolv.conf and
nsswitch.conf are its own (as netbase, debootstrap and glibc wrote them), not this machine's: a stock host's
`::1 localhost` once made every run fail here and nowhere else. The main command runs in full, once (a second
run, to show what it costs once set up, cost CI about five minutes; `just bench` measures that); the test
command runs with the live controls deselected, because `.ci/run` runs those itself on this machine.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fresh_root import ensure_image, quick_start_script, readme_quick_start, run_in_fresh_root
from paths import ROOT

from boundary.host.container import docker_problem
from boundary.toolchain import tools

SUITE = "bookworm"  # Debian 12, the stock machine the issue reproduced on
TIMEOUT_S = 3600

pytestmark = pytest.mark.live


def test_readme_quick_start_block_is_what_the_test_runs() -> None:
    prerequisites, main, test = readme_quick_start(ROOT / "README.md")
    assert main == "just runner-sandbox" and test == "just test"
    assert prerequisites, "the README names no prerequisite: a clean root has no just"
    assert not any("curl" in line and "| bash" in line for line in prerequisites), "no vendor script piped into bash"


@pytest.mark.whole_root
def test_quick_start_passes_on_a_clean_debian_root(tmp_path: Path) -> None:
    problem = docker_problem() or ("" if shutil.which("debootstrap") else "no debootstrap: apt-get install debootstrap")
    if problem:
        pytest.fail(f"the fresh-machine test needs Docker and debootstrap: {problem}")
    prerequisites, main, test = readme_quick_start(ROOT / "README.md")
    tag = ensure_image(SUITE, tools.cache_root() / "fresh-build")
    script = quick_start_script(prerequisites, main, f"{test} -m 'not live'")
    done = run_in_fresh_root(tag, ROOT, script, TIMEOUT_S)
    output = done.stdout + done.stderr
    timings = re.findall(r"^\[fresh\] \d+ s: .*$", output, re.M)
    print("\n".join(re.findall(r"^\[fresh\] .*$", output, re.M)))  # the root's own /etc files, each step's time
    assert "[fresh]   ::1" in output, "the root's hosts file is not the stock one (netbase's has ::1 localhost)"
    # Both streams' ends: a failing test's report is on stdout, the suite's progress lines on stderr.
    seen = f"its output ends:\n{done.stdout[-5000:]}\nits errors end:\n{done.stderr[-2000:]}"
    assert done.returncode == 0, f"exit {done.returncode}; {seen}"
    assert "RESULT: PASS" in output and len(timings) == len(prerequisites) + 3
