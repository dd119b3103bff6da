"""zen's MCP server (the team tools, DESIGN 13) as each agent CLI is told about it.

Every job's agent gets `zen mcp serve` as an MCP server named `zen`, started by the agent itself
over stdio with the job's identity in its environment:

- Claude Code: `--mcp-config <job>/mcp-config.json`, which adds it beside the user's own servers
  (`--strict-mcp-config`, which drops those, only when the lane says `strict_mcp: true`), and an
  allow rule for zen's tools in the per-job settings, so they run without a permission prompt
  (the guardian still checks each call: its PreToolUse hook matches MCP tools too);
- Codex: `-c mcp_servers.zen.*` overrides (command, args, env);
- the sim: `--mcp-config` like Claude, read when its script calls a tool.
"""

from __future__ import annotations

import json
import os
from typing import Any

from zen.agents.base import LaunchContext

SERVER = "zen"
TOOL_PREFIX = f"mcp__{SERVER}__"
# the permission rule that lets Claude Code call every tool of the server without asking
ALLOW_RULE = f"mcp__{SERVER}"


def server_entry(ctx: LaunchContext) -> dict[str, Any]:
    """How to start the job's server: this zen's `mcp serve`, with the job's identity."""
    argv = [*ctx.zen_argv, "mcp", "serve"]
    env = {"ZEN_HOME": str(ctx.home), "ZEN_JOB_ID": ctx.job_id}
    # the server types messages into agents' panes on zen's private tmux server, whose socket
    # lives under the supervisor's TMUX_TMPDIR: an MCP client may hand its servers a bare env
    if os.environ.get("TMUX_TMPDIR"):
        env["TMUX_TMPDIR"] = os.environ["TMUX_TMPDIR"]
    return {"type": "stdio", "command": argv[0], "args": argv[1:], "env": env}


def config_text(ctx: LaunchContext) -> str:
    """The `--mcp-config` file: {"mcpServers": {"zen": ...}}."""
    return json.dumps({"mcpServers": {SERVER: server_entry(ctx)}}, indent=2) + "\n"


def strict(ctx: LaunchContext) -> bool:
    """The lane asks for zen's server alone (`strict_mcp: true` in zen.yaml)."""
    return bool(ctx.lane.get("strict_mcp"))


def codex_settings(ctx: LaunchContext) -> list[str]:
    """`-c` values registering the server with Codex (each value is TOML; JSON strings and
    arrays are valid TOML, an inline table is written out)."""
    entry = server_entry(ctx)
    env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in entry["env"].items())
    return [f"mcp_servers.{SERVER}.command={json.dumps(entry['command'])}",
            f"mcp_servers.{SERVER}.args={json.dumps(entry['args'])}",
            f"mcp_servers.{SERVER}.env={{ {env} }}"]
