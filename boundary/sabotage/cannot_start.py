"""A sabotaged runner whose jobs cannot start on this host, as a container runtime that refuses the host's cgroups
does: its launcher prints the runtime's error and exits 126 before the agent runs. The run must stop at the unit's
first job with that one error, in the launcher's words, not judge every cell INCONCLUSIVE (issue 44).

Select it with `--runner boundary.sabotage.cannot_start:CannotStart`.
"""

from __future__ import annotations

from boundary.layout import JobPaths
from boundary.runners.opencode import OpencodeRunner

CRUN_ERROR = "Error: OCI runtime error: crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2"


class CannotStart(OpencodeRunner):
    """The opencode reference runner, launched by something that fails before the agent starts."""

    name = "cannot-start"

    def launch_argv(self, paths: JobPaths, agent_argv: list[str]) -> list[str]:
        launcher = paths.runner_dir / "launch"
        launcher.write_text(f"#!/bin/sh\necho '{CRUN_ERROR}' >&2\nexit 126\n")
        launcher.chmod(0o755)
        return [str(launcher), *agent_argv]
