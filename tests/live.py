"""What the live tests share: the real suite run in a subprocess pytest, and its JSON report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from boundary.suite import pytest_args


def run_suite(
    pytester: pytest.Pytester, *options: str, timeout: float = 600
) -> tuple[pytest.RunResult, dict[str, Any]]:
    """The live suite with `options`, and the report it wrote (a run that wrote none fails here, with its output)."""
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(*pytest_args(), "--boundary-report", str(report), *options, timeout=timeout)
    assert report.exists(), f"the suite wrote no report:\n{result.stdout.str()[-3000:]}"
    return result, json.loads(report.read_text())
