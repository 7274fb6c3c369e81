"""The doctor's Node check: the Node that will run the pinned tools meets every `engines.node` they declare."""

from __future__ import annotations

from boundary import proc
from boundary.doctor.check import Check
from boundary.toolchain import node as nodejs
from boundary.toolchain import tools


def check_node() -> Check:
    """The Node that will run the tools meets every `engines.node` they declare (srt: >= 22.12.0)."""
    try:
        node = tools.node()
        found = nodejs.version(node)
        needs = node_requirements()
    except (tools.ToolsError, nodejs.NodeError, proc.ProcTimeout, OSError) as error:
        return Check("node engines", False, f"cannot tell which Node runs the tools: {error}", node_fix())
    unmet = [f"{who} needs {spec}" for who, spec in needs.items() if spec and not _meets(found, spec)]
    if unmet:
        return Check("node engines", False, f"node {found} ({node}) is too old: " + "; ".join(unmet), node_fix())
    pinned = [f"{who} {spec or '(declares none)'}" for who, spec in needs.items() if _is_pinned(who)]
    others = sum(1 for who, spec in needs.items() if spec and not _is_pinned(who))
    return Check(
        "node engines",
        True,
        f"node {found} ({node}) meets " + ", ".join(pinned) + f", and {others} dependencies' ranges",
    )


def node_requirements() -> dict[str, str]:
    """`package version` → its `engines.node` ('' if none): each pinned tool, then each locked dependency."""
    if tools.source() == "npm":
        pins = {name: pin for project in tools.PROJECTS for name, pin in project.pins().items()}
        locked = {name: spec for project in tools.PROJECTS for name, spec in project.engines().items()}
        return {f"{name} {pin}": locked.get(name, "") for name, pin in pins.items()} | {
            name: spec for name, spec in locked.items() if name not in pins
        }
    found = [tools.manifest_beside(tools.executable(name)) or {"name": name} for name in tools.PATH_REQUIRED]
    return {f"{m['name']} {m.get('version', '?')}": _declared_node(m) for m in found}


def _declared_node(manifest: dict[str, object]) -> str:
    engines = manifest.get("engines")
    return str(engines.get("node", "")) if isinstance(engines, dict) else ""


def _is_pinned(who: str) -> bool:
    return " " in who  # pinned tools are named with their version


def _meets(found: str, spec: str) -> bool:
    try:
        return nodejs.satisfies(found, spec)
    except ValueError:  # a range this harness cannot read is not a pass
        return False


def node_fix() -> str:
    if tools.source() == "path":
        return "put a Node.js that meets these ranges first on PATH (the dev shell's `nix develop` does)"
    return f"pin a {nodejs.WHEEL} version that meets these ranges in pyproject.toml, then `just setup`"
