"""Which tools an agent may call at all, by name, before any rule looks at what they do
(security-findings L18).

    refusal(tool) -> a deny Decision for a tool an agent may not use, else None (the rules judge it)

MCP tools (`mcp__<server>__<tool>`): only zen's own server's (`mcp__zen__*`, the team tools, which
the core and the MCP server judge) are known. Any other server's tool is denied by default: the
guardian cannot tell what it does (a browser, a database, a shell behind a friendly name), and an
agent, or a branch it once landed, can add servers through a project .mcp.json.

Claude Code's own tools, one by one (the core, decide.py, judges the ones that touch files,
commands and the web: Bash, Write/Edit/MultiEdit/NotebookEdit, Read/Glob/Grep/LS/NotebookRead,
WebFetch; Codex's apply_patch; Gemini CLI's, mapped by the hook):

    Task, Agent              a subagent: its own tool calls go through this same hook     allowed
    TodoWrite, TodoRead      the agent's in-memory task list                              allowed
    BashOutput               output of a background shell the agent started               allowed
    KillShell, KillBash      stops a background shell the agent started (its own tree)    allowed
    ExitPlanMode, EnterPlanMode   the session's mode                                      allowed
    AskUserQuestion          a question on the agent's own screen                         allowed
    WebSearch                a search query (no URL the agent picks; WebFetch is judged)  allowed
    SlashCommand, Skill      a command or skill whose tool calls go through this hook     allowed
    ListMcpResourcesTool, ReadMcpResourceTool   reads resources of configured servers    allowed
    anything else            unknown: the core denies it (tool.unknown)

Lean on purpose (imported by the hook's decision path): stdlib + zen.guard.api.
"""

from __future__ import annotations

from zen.guard.api import DENY, Decision

# MCP servers whose tools the guardian knows (zen.agents.teamtools.SERVER)
KNOWN_MCP_SERVERS = frozenset({"zen"})
# Claude Code's tools that neither run commands nor touch files themselves (see above)
ORDINARY_TOOLS = frozenset({"Task", "Agent", "TodoWrite", "TodoRead", "BashOutput", "KillShell", "KillBash",
                            "ExitPlanMode", "EnterPlanMode", "AskUserQuestion", "WebSearch", "SlashCommand",
                            "Skill", "ListMcpResourcesTool", "ReadMcpResourceTool"})


def refusal(tool: str) -> Decision | None:
    if not tool.startswith("mcp__"):
        return None
    server = tool[len("mcp__"):].split("__", 1)[0]
    if server in KNOWN_MCP_SERVERS:
        return None
    return Decision(DENY, "tool.mcp-unknown", f"{tool} is a tool of the MCP server {server!r}, which the "
                    "guardian does not know, so it cannot judge what it does; agents use zen's own tools "
                    "(mcp__zen__*) and their ordinary ones")
