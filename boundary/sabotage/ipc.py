"""A sabotaged runner for the sweep's kernel objects: its launcher gives each job a mount namespace of its own but
shares the host's IPC namespace, as a launcher written for paths only does. System V shared memory and message
queues and POSIX message queues are no files: job B reaches job A's by key or name.

Select it with `--scenario sweep --runner boundary.sabotage.ipc:SharesIpc`.
"""

from __future__ import annotations

from boundary.runners.opencode import OpencodeRunner
from boundary.runners.reference import LAUNCHER


class SharesIpc(OpencodeRunner):
    """The opencode reference runner, its launcher without `--unshare-ipc`."""

    name = "shares-ipc"
    launcher = LAUNCHER.replace(" --unshare-ipc", "")
