"""The scripted model: a loopback server that replays tool-call scripts."""

from boundary.model.record import JobRecord
from boundary.model.script import Script, ToolCall
from boundary.model.server import ModelServer

__all__ = ["JobRecord", "ModelServer", "Script", "ToolCall"]
