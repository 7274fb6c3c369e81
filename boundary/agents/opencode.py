"""opencode: config, environment, launch, tool vocabulary and denial texts."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

from boundary import tools
from boundary.layout import JobPaths
from boundary.model.script import ToolCall

GUARD_PLUGIN = Path(__file__).parent / "opencode_files" / "boundary-guard.js"

# Tools opencode 1.18.33 offers the model with the reference runner's config.
EXPECTED_TOOLS = frozenset({"bash", "edit", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch", "write"})
FORBIDDEN_TOOLS = ("opencode_*",)  # opencode's own server tools run unconfined (incident 2)
PERMISSION_DENIAL = "The user has specified a rule which prevents you from using this specific tool call"
SAVED_OUTPUT = re.compile(r"Full output saved to: (\S+)")

# Everything that would make opencode reach the network at start.
QUIET_ENV = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}


class OpenCode:
    name: ClassVar[str] = "opencode"
    denials: ClassVar[dict[str, tuple[str, ...]]] = {"agent permission": (PERMISSION_DENIAL,)}
    non_boundary_refusals: ClassVar[tuple[str, ...]] = ("Cannot read binary file",)
    # Each shell call starts its own srt; concurrent ones race on srt's mount points.
    serial_tools: ClassVar[frozenset[str]] = frozenset({"bash"})

    def version(self) -> str:
        return tools.TOOLS.version("opencode-ai")

    def argv(self) -> list[str]:
        return [str(tools.TOOLS.bin("opencode")), "run", "--model", "scripted/m", "go"]

    def env(self, paths: JobPaths, account_db: Path, shell: Path) -> dict[str, str]:
        keep = {k: os.environ[k] for k in ("PATH", "LANG", "TERM") if k in os.environ}
        return {
            **keep,
            **QUIET_ENV,
            "HOME": str(paths.data / "home"),
            "XDG_DATA_HOME": str(paths.data),
            "XDG_CONFIG_HOME": str(paths.config_home),
            "XDG_CACHE_HOME": str(paths.cache_home),
            "XDG_STATE_HOME": str(paths.state_home),
            "TMPDIR": str(paths.tmp),
            "OPENCODE_DB": str(account_db.resolve()),
            "SHELL": str(shell),
        }

    def config(self, model_url: str, permission: dict[str, Any], plugins: list[Any]) -> dict[str, Any]:
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": model_url, "apiKey": "scripted"},
            "models": {"m": {"name": "m"}},
        }
        return {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"scripted": provider},
            "model": "scripted/m",
            "autoupdate": False,
            "share": "disabled",
            "permission": permission,
            "plugin": plugins,
        }

    def config_dir(self, paths: JobPaths) -> Path:
        return paths.config_home / "opencode"

    def seed_config_dir(self, paths: JobPaths) -> Path:
        """Pre-install the plugin SDK so opencode installs nothing at start (it would hang offline)."""
        directory = self.config_dir(paths)
        directory.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(tools.OPENCODE_CONFIG.source / name, directory / name)
        modules = directory / "node_modules"
        modules.unlink(missing_ok=True)
        modules.symlink_to(tools.OPENCODE_CONFIG.require() / "node_modules")
        (paths.data / "home").mkdir(exist_ok=True)
        return directory

    # The tool vocabulary of 1.18.33; the model server checks it against the offered schemas.
    def read(self, id: str, path: Path) -> ToolCall:
        return ToolCall(id, "read", {"filePath": str(path)})

    def grep(self, id: str, pattern: str, path: Path) -> ToolCall:
        return ToolCall(id, "grep", {"pattern": pattern, "path": str(path)})

    def glob(self, id: str, pattern: str, path: Path) -> ToolCall:
        return ToolCall(id, "glob", {"pattern": pattern, "path": str(path)})

    def shell(self, id: str, command: str) -> ToolCall:
        return ToolCall(id, "bash", {"command": command})

    def tool_output_dir(self, paths: JobPaths) -> Path:
        return paths.data / "opencode" / "tool-output"

    def shell_capture_dir(self, paths: JobPaths, project: str) -> Path:
        return paths.data / "opencode" / "shell" / project

    def saved_output(self, tool_result: str) -> Path | None:
        match = SAVED_OUTPUT.search(tool_result)
        return Path(match.group(1)) if match else None

    def full_result(self, tool_result: str) -> str:
        """The result with the output opencode saved aside (a large output is truncated for the model)."""
        saved = self.saved_output(tool_result)
        if saved is None:
            return tool_result
        try:
            return tool_result + "\n" + saved.read_bytes().decode(errors="replace")
        except OSError as error:
            return tool_result + f"\n[boundary: could not read the saved output {saved}: {error}]"
