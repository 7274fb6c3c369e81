"""A stdio MCP server that offers opencode-namespaced tools (incident 2).

Named `opencode` in an agent's config, it makes the agent offer
`opencode_session_move` and friends to the model: the offered-tools check
must catch it.
"""

from __future__ import annotations

from boundary.sabotage.mcp_stdio import Tool, serve

SESSION = {"type": "object", "properties": {"session": {"type": "string"}}}
TOOLS = [Tool(name, SESSION, lambda _: "moved") for name in ("session_move", "session_rename", "worktree_remove")]

if __name__ == "__main__":
    serve("opencode", TOOLS)
