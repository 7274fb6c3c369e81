"""The protocol's `describe` example offers what the example runners offer (issue 43 item 6): an author copies its
lists, and a list that drifted from the runners' (`webfetch` offered where they take it away) is a wrong lesson."""

from __future__ import annotations

import json
import re
from typing import Any

from paths import ROOT

from boundary.agents.opencode import EXPECTED_TOOLS, FORBIDDEN_TOOLS

LIST = r"export const {name} = (\[[^\]]*\])"


def _describe_example() -> dict[str, Any]:
    text = (ROOT / "docs/runner-protocol.md").read_text()
    block = text.split("### `describe`", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    return dict(json.loads(block))


def _example_runner_list(name: str) -> list[str]:
    source = (ROOT / "examples/runners/opencode/runner.mjs").read_text()
    found = re.search(LIST.format(name=name), source)
    assert found is not None, f"examples/runners/opencode/runner.mjs no longer exports {name}"
    return list(json.loads(found[1]))


def test_the_describe_examples_tool_lists_are_the_example_and_reference_runners() -> None:
    example = _describe_example()
    assert example["agent"] == "opencode"
    assert sorted(example["expected_tools"]) == sorted(_example_runner_list("EXPECTED_TOOLS"))
    assert sorted(example["forbidden_tools"]) == sorted(_example_runner_list("FORBIDDEN_TOOLS"))
    assert set(_example_runner_list("EXPECTED_TOOLS")) == EXPECTED_TOOLS
    assert tuple(_example_runner_list("FORBIDDEN_TOOLS")) == FORBIDDEN_TOOLS
    assert "webfetch" not in example["expected_tools"]
