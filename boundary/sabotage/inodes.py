"""Sabotaged runners whose jobs share files by inode: what one job writes in place, the others read.

Select one with `--runner boundary.sabotage.inodes:NAME`; `cross_job_writes` must find each (`shared_file`).
"""

from __future__ import annotations

import os
from pathlib import Path

from boundary.layout import JobPaths
from boundary.runners.opencode import OpencodeRunner


class LinksWarmCache(OpencodeRunner):
    """Hands each job a warm cache by hard-linking one file of its state into the job's TMPDIR, as a `cp -al`
    template home or a shared package store does: a job that writes its copy in place writes every job's."""

    name = "links-warm-cache"

    def checked_out(self, name: str) -> JobPaths:
        paths = super().checked_out(name)
        warm = self._layout().state / "warm" / "index.txt"
        if not warm.exists():
            warm.parent.mkdir(parents=True, exist_ok=True)
            warm.write_text("the warm cache's index\n")
        os.link(warm, paths.tmp / "warm-index.txt")
        return paths


class HardLinkedClones(OpencodeRunner):
    """Clones each checkout with git's local default, which hard-links `.git/objects` to the repository and so to
    every other job's checkout, and lets jobs commit: `.git` is writable but for its hooks and config. A job that
    rewrites one of its own objects in place rewrites that object for every job, and for every later clone."""

    name = "hard-linked-clones"

    hard_linked_clones = True

    def protected_paths(self, paths: JobPaths) -> list[Path]:
        committing = [p for p in super().protected_paths(paths) if p.name != ".git"]
        return [*committing, paths.checkout / ".git" / "hooks", paths.checkout / ".git" / "config"]
