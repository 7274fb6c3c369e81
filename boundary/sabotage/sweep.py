"""Sabotaged runners for the sweep: each shares one writable place between its jobs that the sweep's fixed list does
not name, as a user would to make installs fast; the sweep must find it by itself and name it.

Select one with `--scenario sweep --runner boundary.sabotage.sweep:NAME`.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from boundary.layout import JobPaths
from boundary.runners.opencode import OpencodeRunner
from boundary.sandboxes import ShellPolicy

SHARED_CACHE = "npm-cache"  # under the account's directory: one for every job of the account


class SharesNpmCache(OpencodeRunner):
    """The opencode reference runner, but every job of the account gets one npm cache: `npm_config_cache` names it
    and the shell's sandbox lets it read and write there. What job A leaves in it, job B reads."""

    name = "shares-npm-cache"

    def shared_cache(self) -> Path:
        return self._layout().account_dir / SHARED_CACHE

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        cache = self.shared_cache()
        cache.mkdir(parents=True, exist_ok=True)
        return {**super().job_env(paths, shell), "npm_config_cache": str(cache)}

    def shell_policy(self, paths: JobPaths) -> ShellPolicy:
        policy = super().shell_policy(paths)
        cache = self.shared_cache()
        cache.mkdir(parents=True, exist_ok=True)  # srt binds only what exists
        policy.allow_read.append(cache)
        policy.allow_write.append(cache)
        return policy


class NpmAuthInSharedCache(SharesNpmCache):
    """The shared npm cache, holding the account's registry credential the way npm keeps one: `_auth`, the base64 of
    `user:password`, written as each job is created. Nothing names the file and it lies outside any place the
    harness searches from outside; only the sweep's shell, looking for every canary's encoded forms, finds the key."""

    name = "npm-auth-in-shared-cache"
    auth = ""

    def keep_secret(self, secret: str) -> None:
        super().keep_secret(secret)
        self.auth = base64.b64encode(f"boundary:{secret}".encode()).decode()

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        env = super().job_env(paths, shell)
        (self.shared_cache() / "_auth").write_text(f"_auth={self.auth}\n")
        return env


SHARED_GIT_CONFIG = "gitconfig"  # under the account's directory: one for every job of the account


class SharesGitConfig(OpencodeRunner):
    """The opencode reference runner, but every job of the account gets one global git config, so that
    `git config --global` works in a job: `GIT_CONFIG_GLOBAL` names it and the shell's sandbox lets it write that one
    file. No directory is shared; what job A writes into the file, job B reads (issue 28, item 4)."""

    name = "shares-git-config"

    def shared_config(self) -> Path:
        config = self._layout().account_dir / SHARED_GIT_CONFIG
        if not config.exists():
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text("[init]\n\tdefaultBranch = main\n")
        return config

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        return {**super().job_env(paths, shell), "GIT_CONFIG_GLOBAL": str(self.shared_config())}

    def shell_policy(self, paths: JobPaths) -> ShellPolicy:
        policy = super().shell_policy(paths)
        policy.allow_read.append(self.shared_config())
        policy.allow_write.append(self.shared_config())
        return policy


class ToolsWriteTmp(OpencodeRunner):
    """The opencode reference runner, but the agent's file tools may write the host's `/tmp` (a scratch area its
    users asked for: the guard's write roots and the permission rules allow it), while the shell's sandbox still
    keeps the shell out of it. opencode's tools run in the agent's process, outside the shell's sandbox: what job
    A's write tool leaves in `/tmp`, job B's shell reads."""

    name = "tools-write-tmp"

    def plugins(self, paths: JobPaths) -> list[Any]:
        plugins = super().plugins(paths)
        for _, options in plugins:
            options["writeRoots"] = [*options["writeRoots"], "/tmp"]
        return plugins

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        permission = super().permission(paths)
        allowed = {**permission["external_directory"], "/tmp/*": "allow"}
        return {**permission, "external_directory": allowed}
