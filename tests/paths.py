"""Where the tests find the checkout's files, from any folder under tests/."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout: its README, docs and examples
TESTS = ROOT / "tests"  # the helpers and samples the tests share (live.py, stock_etc/, podman_hosts/)
