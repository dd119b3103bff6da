"""The agent CLIs zen can run, named once. Lean: zen.agents' registry imports it."""

from __future__ import annotations

from enum import StrEnum


class AgentKind(StrEnum):
    claude = "claude"
    codex = "codex"
    aider = "aider"
    gemini = "gemini"
    sim = "sim"
    cmd = "cmd"


AGENT_NAMES: tuple[str, ...] = tuple(a.value for a in AgentKind)
DEFAULT_AGENT = AgentKind.sim
