"""Agent teams (DESIGN section 13): `zen mcp serve`, one MCP server over stdio per job, whose
tools (`agent_spawn`, `agent_status`, `agent_wait`, `agent_report`, `agent_control`, ...) call the
same orchestration code as `zen team`. The job's identity comes from its environment.
"""
