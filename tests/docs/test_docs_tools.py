"""The protocol's example `describe` offers the tools the opencode example runner offers: a runner author copies
it, and a tool listed there that the example takes away (webfetch, which fetched the runner's API) would be
offered by the copy."""

from __future__ import annotations

import json
import re

from paths import ROOT


def _example_list(name: str) -> list[str]:
    source = (ROOT / "examples" / "runners" / "opencode" / "runner.mjs").read_text()
    found = re.search(rf"^export const {name} = (\[.*?\])$", source, re.MULTILINE)
    assert found, f"examples/runners/opencode/runner.mjs no longer exports {name} as one line"
    return list(json.loads(found[1]))


def _protocol_describe() -> dict[str, object]:
    text = (ROOT / "docs" / "runner-protocol.md").read_text()
    blocks = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", text, re.DOTALL) if '"protocol"' in block]
    assert blocks, "docs/runner-protocol.md has no example describe answer"
    return blocks[0]


def test_the_protocols_example_offers_what_the_example_runner_offers() -> None:
    describe = _protocol_describe()
    assert describe["expected_tools"] == _example_list("EXPECTED_TOOLS")
    assert describe["forbidden_tools"] == _example_list("FORBIDDEN_TOOLS")
