"""The harness's own tests: unit tests, and live controls that run the scenarios against sabotaged runners."""

import os

from boundary.toolchain.tools import cache_root

pytest_plugins = ["pytester"]

# pytester gives each control a fresh HOME; the pinned tools (~370 MB) stay in the one real cache.
os.environ.setdefault("BOUNDARY_CACHE", str(cache_root()))
