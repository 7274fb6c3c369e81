"""npm's range grammar as package `engines` use it, and the pinned Node itself."""

from __future__ import annotations

import pytest

from boundary.toolchain import node


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("24.19.0", ">=22.12.0", True),
        ("22.20.0", ">=22.12.0", True),
        ("20.20.2", ">=22.12.0", False),
        ("22.20.0", "^22.22.2 || ^24.15.0 || >=26.0.0", False),
        ("24.19.0", "^22.22.2 || ^24.15.0 || >=26.0.0", True),
        ("8.0.0", ">= 8", True),
        ("20.1.0", "20.x", True),
        ("21.0.0", "20.x", False),
        ("0.2.5", "^0.2", True),
        ("0.3.0", "^0.2", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("5.0.0", "*", True),
        ("1.2.5", ">1.2", False),
        ("1.3.0", ">1.2", True),
        ("1.2.9", "<=1.2", True),
        ("1.3.0", "<=1.2", False),
        ("18.0.0", ">=18 <20", True),
        ("20.0.0", ">=18 <20", False),
        ("v12.17.0", "=12.17.0", True),
    ],
)
def test_satisfies(version: str, spec: str, expected: bool) -> None:
    assert node.satisfies(version, spec) is expected


@pytest.mark.parametrize("spec", ["1.0.0 - 2.0.0", ">=22.0.0-rc.1", "latest"])
def test_a_range_it_cannot_read_is_an_error_not_a_pass(spec: str) -> None:
    with pytest.raises(ValueError):
        node.satisfies("24.0.0", spec)


def test_the_pinned_wheel_node_runs_and_meets_srt() -> None:
    found = node.version(node.wheel_node())
    assert node.satisfies(found, ">=22.12.0"), found
    assert node.wheel_npm_cli().is_file()
