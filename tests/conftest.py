"""The harness's own tests: unit tests, and live controls that run the scenarios against sabotaged runners."""

import os

import pytest

from boundary.toolchain.tools import cache_root

pytest_plugins = ["pytester"]

# pytester gives each control a fresh HOME; the pinned tools (~370 MB) stay in the one real cache.
os.environ.setdefault("BOUNDARY_CACHE", str(cache_root()))

# The tests that each run a whole default run (5 to 13 minutes; `just test` prints its slowest): collected first, so
# that no worker runs one alone at the end while the other has nothing left (the gVisor example's, last, left one
# worker idle for about ten minutes of a CI run).
LONGEST_FIRST = (
    "test_example_gvisor.py::test_the_example_passes_every_scenario",
    "test_example_podman.py::test_the_example_passes_every_scenario",
    "test_example_podman.py::test_a_job_that_sees_its_places_elsewhere_passes_every_scenario",
    "test_runner_repository.py::",
    "test_example_claude.py::test_the_example_passes_every_scenario",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not any(name in item.nodeid for name in LONGEST_FIRST))  # stable: the rest as it was
