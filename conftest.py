"""In a checkout, `pytest scenarios/` is the live suite: the same run, options and reports as `boundary run`.

The suite's tests live in the package (boundary/suite), under its own settings, so that an installed boundary runs
them from any directory; this forwards a run that names the scenarios' folder there. `pytest tests` (the harness's
own tests) never loads the suite's plugin.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary.cli import run_suite
from boundary.suite.options import add_options

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


def pytest_addoption(parser: pytest.Parser) -> None:
    """The suite's options, so that `pytest scenarios/ --agent claude` parses before it is forwarded."""
    add_options(parser)


def _names_scenarios(arg: str, invoked_from: Path) -> bool:
    path = Path(arg.split("::")[0])
    return (invoked_from / path).resolve() == SCENARIOS


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """`pytest scenarios/ [OPTIONS]` runs `boundary run [OPTIONS]`; any other run goes on as it came."""
    invoked_from = config.invocation_params.dir
    args = list(config.invocation_params.args)
    if not any(_names_scenarios(arg, invoked_from) for arg in args):
        return None
    rest = [arg for arg in args if not _names_scenarios(arg, invoked_from)]
    return run_suite(rest)
