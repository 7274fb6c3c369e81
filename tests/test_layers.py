"""The layers hold: no module imports one of a higher layer at run time.

A layer is a package of `boundary` (or one of its top-level modules); the scenarios (`scenarios/` in the checkout)
are `boundary.scenarios`. Imports for annotations only (under `if TYPE_CHECKING:`) load nothing and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. Within a layer, units may import each other.
LAYERS: tuple[frozenset[str], ...] = tuple(
    frozenset(units.split())
    for units in (
        "boundary proc text canary unpack verdict layout beacon shared_defaults model results",  # no agent or host
        "toolchain host agents sandboxes probes",  # the tools, the hosts, what each agent is
        "runners doctor",  # the runners under test; what this host can run
        "jobs writes reach",  # running jobs and attacks
        "scenarios report sabotage ci",  # what is attacked, and what is said of it (ci: and where: GitHub)
        "suite",  # the live suite: pytest plugin, options, bench
        "cli",  # the command line
    )
)
NOBODY_IMPORTS = {"sabotage"}  # sabotaged runners are for the self-tests (and --runner), never the harness's code


def unit_of(module: str) -> str | None:
    """The layer unit a dotted module name belongs to (None: not boundary's)."""
    parts = module.split(".")
    if parts[0] != "boundary":
        return None
    return parts[1] if len(parts) > 1 else "boundary"


def rank_of(unit: str) -> int:
    for rank, units in enumerate(LAYERS):
        if unit in units:
            return rank
    raise LookupError(unit)


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name, the scenarios under their import name."""
    found: dict[str, Path] = {}
    for base, package in ((ROOT / "boundary", "boundary"), (ROOT / "scenarios", "boundary.scenarios")):
        for path in sorted(base.rglob("*.py")):
            relative = path.relative_to(base)
            if package == "boundary" and relative.parts[0] == "scenarios":
                continue  # the link to scenarios/, walked under its own name
            found[".".join([package, *relative.with_suffix("").parts]).removesuffix(".__init__")] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def runtime_imports(source: str) -> list[str]:
    """The dotted names a module imports when it runs (a `from X import y` counts as X and X.y)."""
    found: list[str] = []
    pending: list[ast.AST] = [ast.parse(source)]
    while pending:
        node = pending.pop()
        if _type_checking_only(node):
            continue
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        pending += ast.iter_child_nodes(node)
    return found


def violations(module: str, source: str) -> list[str]:
    """What `module` imports against the layers, each said with the fix."""
    importer = unit_of(module)
    assert importer is not None
    said: list[str] = []
    for name in dict.fromkeys(runtime_imports(source)):
        unit = unit_of(name)
        if unit is None or unit == importer or (unit == "boundary" and name != "boundary"):
            continue  # not boundary's, the same unit, or `from boundary import x` (x is judged on its own)
        if unit in NOBODY_IMPORTS:
            said.append(f"{module} imports {name}: nothing in the harness imports the sabotaged runners")
        elif rank_of(unit) > rank_of(importer):
            said.append(
                f"{module} (layer {rank_of(importer)}, {importer}) imports {name} (layer {rank_of(unit)}, {unit}): "
                "a lower layer never imports a higher one; move the code down, or pass in what it needs"
            )
    return said


def test_every_module_has_a_layer() -> None:
    """A new package or top-level module is placed in LAYERS before it counts as held."""
    placed = set().union(*LAYERS)
    unplaced = sorted({unit for module in module_files() if (unit := unit_of(module)) not in placed})
    assert not unplaced, f"expected every unit of boundary in a layer of tests/test_layers.py; not placed: {unplaced}"


def test_no_module_imports_a_higher_layer() -> None:
    found = [v for module, path in module_files().items() for v in violations(module, path.read_text())]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source", "caught"),
    [
        ("boundary.host.base", "from boundary.scenarios.base import Scenario\n", True),
        ("boundary.doctor.checks", "import boundary.suite.plugin\n", True),
        ("boundary.scenarios.tamper.scenario", "from boundary.sabotage import runners\n", True),
        (
            "boundary.agents.base",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import boundary.report\n",
            False,
        ),
        ("boundary.suite.plugin", "from boundary.scenarios import registry\n", False),
        ("boundary.report.view", "from boundary.scenarios.base import Cell\n", False),
    ],
)
def test_the_rule_catches_an_upward_import(module: str, source: str, caught: bool) -> None:
    """The check can fail: an upward import, or one of the sabotaged runners, is named; a downward one is not."""
    assert bool(violations(module, source)) is caught
