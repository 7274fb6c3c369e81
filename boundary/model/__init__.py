"""The scripted model: a loopback server that replays tool-call scripts.

Imports only the standard library and the core modules: every layer may use it.
"""

from boundary.model.record import JobRecord
from boundary.model.script import Script, ToolCall
from boundary.model.server import ModelServer

__all__ = ["JobRecord", "ModelServer", "Script", "ToolCall"]
