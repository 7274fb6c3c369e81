"""The live suite, shipped inside the package so `boundary run` works from any directory.

`pytest_args()` is how every entry point (`boundary run`, `just bench`, the self-tests) starts it: this
directory's tests under this directory's pytest settings, whatever configuration the caller's
directory holds. The suite may import everything but the command line.
"""

from __future__ import annotations

from pathlib import Path

SUITE = Path(__file__).parent
SETTINGS = SUITE / "pytest.ini"


def pytest_args(rootdir: Path | None = None) -> list[str]:
    """The suite and its settings; the caller's options follow."""
    root = ["--rootdir", str(rootdir)] if rootdir else []
    return [str(SUITE), "-c", str(SETTINGS), *root, "-p", "no:cacheprovider"]
