"""The reference runner for opencode: per-job data dirs, a guard plugin, and the shell under srt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from boundary.agents.opencode import (
    EXPECTED_TOOLS,
    FORBIDDEN_TOOLS,
    GUARD_PLUGIN,
    NO_PROJECT_CONFIG,
    PERMISSIVE,
    OpenCode,
)
from boundary.layout import JobPaths
from boundary.runners.contract import Job
from boundary.runners.reference import ReferenceRunner
from boundary.sandboxes import OS_DENIALS

GUARD_DENIAL = "boundary guard:"


class OpencodeRunner(ReferenceRunner):
    """opencode jobs: deny-by-default permissions, the guard plugin on the file tools, srt around the shell."""

    agent: OpenCode = OpenCode()
    default_sandbox: ClassVar[str] = "srt"
    runner_denials: ClassVar[dict[str, tuple[str, ...]]] = {"runner plugin": (GUARD_DENIAL,), "OS sandbox": OS_DENIALS}
    switches: ClassVar[frozenset[str]] = frozenset({"agent permission", "runner plugin", "OS sandbox"})

    def configure_job(self, paths: JobPaths, model_url: str) -> Job:
        config_dir = self.agent.seed_config_dir(paths)
        config = self.agent.config(model_url, self.permission(paths), self.plugins(paths))
        config["tools"] = {pattern: False for pattern in self.removed_tools()}
        config.update(self.agent_config_extra(paths))
        (config_dir / "opencode.json").write_text(json.dumps(config, indent=2))
        shell = self.write_shell_wrapper(paths)
        return Job(paths.name, paths, self.launch_argv(paths, self.agent.argv()), self.job_env(paths, shell))

    def expected_tools(self) -> frozenset[str]:
        return EXPECTED_TOOLS

    def forbidden_tools(self) -> tuple[str, ...]:
        return FORBIDDEN_TOOLS

    # -- the parts ------------------------------------------------------------------
    def permission(self, paths: JobPaths) -> dict[str, Any]:
        """Agent rules: no directory outside the checkout but the job's own data."""
        removed = {pattern: "deny" for pattern in self.removed_tools()}
        if "agent permission" in self.off:  # the tools it takes away stay away: a tool set, not a layer
            return {**PERMISSIVE, **removed}
        return {"external_directory": {"*": "deny", f"{paths.data}/*": "allow"}, **removed}

    def removed_tools(self) -> tuple[str, ...]:
        """Tools the runner takes away from the model: config `tools: false`, a deny rule, and the guard."""
        return self.forbidden_tools()

    def plugins(self, paths: JobPaths) -> list[Any]:
        """The guard: file tools read only the job's roots, write only its checkout (never what configures
        the agent or git), and forbidden tools are removed. None where the plugin layer is turned off."""
        if "runner plugin" in self.off:
            return []
        options = {
            "roots": [str(paths.checkout), str(paths.data)],
            "writeRoots": [str(paths.checkout)],
            "protected": [str(p) for p in self.protected_paths(paths)],
            "forbiddenTools": list(self.removed_tools()),
        }
        return [[self.guard_uri(), options]]

    def guard_uri(self) -> str:
        return GUARD_PLUGIN.as_uri()

    def agent_config_extra(self, paths: JobPaths) -> dict[str, Any]:
        """More agent config (e.g. MCP servers), merged over the rest."""
        return {}

    def job_env(self, paths: JobPaths, shell: Path) -> dict[str, str]:
        """The job's whole environment: nothing of the harness's leaks in; project configuration off."""
        return {**self.agent.env(paths, self.account_db(), shell), **NO_PROJECT_CONFIG}

    def write_shell_wrapper(self, paths: JobPaths) -> Path:
        problem = self.sandbox.tmpdir_problem(paths.tmp)
        if problem:
            raise RuntimeError(f"job {paths.name}: {problem} (the runner's state is under {self._layout().state})")
        wrapper = paths.runner_dir / "shell"
        wrapper.write_text(self.sandbox.wrapper(self.shell_policy(paths), paths.runner_dir))
        wrapper.chmod(0o755)
        return wrapper


class DefaultPermissions(OpencodeRunner):
    """The same runner with opencode's own permission rules: every directory outside the checkout is an `ask`,
    which `opencode run` auto-rejects, ending the job on that call. The guard and the sandbox hold all the same;
    the harness must go on in new jobs and credit each ended call to the permission layer (a run with no
    INCONCLUSIVE cell)."""

    name = "opencode-default-permissions"

    def permission(self, paths: JobPaths) -> dict[str, Any]:
        return {pattern: "deny" for pattern in self.removed_tools()}  # the tools it takes away stay away
