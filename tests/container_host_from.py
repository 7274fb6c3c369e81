"""Boot the container host from whichever Python runs this file; run commands inside; print what happened as JSON.

`python tests/container_host_from.py SESSION_DIR '[["argv", ...], ...]'`. test_container_host.py runs it with a
distribution Python (under /usr), so the mounts are the ones that Python works out for itself.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from boundary.host.container import ContainerHost
from boundary.host.mounts import Interpreter, shared_paths


def boot_and_run(session: Path, commands: list[list[str]]) -> dict[str, Any]:
    host = ContainerHost(session / "host", session, progress=lambda line: print(line, file=sys.stderr)).start()
    try:
        ran = [host.run(argv, timeout=60) for argv in commands]
    finally:
        host.stop()
    return {
        "interpreter": json.loads(json.dumps(dataclasses.asdict(Interpreter.current()), default=str)),
        "mounts": {str(path): mode for path, mode in shared_paths(session).items()},
        "boot_s": host.boot_s,
        "ran": [{"argv": r.args, "returncode": r.returncode, "stdout": r.stdout, "stderr": r.stderr} for r in ran],
    }


if __name__ == "__main__":
    print(json.dumps(boot_and_run(Path(sys.argv[1]), json.loads(sys.argv[2]))))
