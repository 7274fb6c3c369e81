"""The live suite starts here: check once, before any job or xdist worker starts, that this host can run it."""

from __future__ import annotations

import pytest

from boundary.suite.plugin import preflight_once


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers
def pytest_sessionstart(session: pytest.Session) -> None:
    preflight_once(session)
