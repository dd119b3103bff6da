"""Agent adapters: how to start each agent CLI, and how it signals turns (one module each).

Kept free of imports at package level: `python -m zen.agents.simagent` runs this file first and
must start fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from zen.core.agents import AGENT_NAMES

if TYPE_CHECKING:
    from zen.agents.base import AgentAdapter

# agent name -> "module:class"; modules are imported only when their agent is asked for
_ADAPTERS = {
    "claude": "zen.agents.claude:ClaudeAdapter",
    "codex": "zen.agents.codex:CodexAdapter",
    "aider": "zen.agents.aider:AiderAdapter",
    "gemini": "zen.agents.gemini:GeminiAdapter",
    "sim": "zen.agents.sim:SimAdapter",
    "cmd": "zen.agents.cmd:CmdAdapter",
}

NAMES = AGENT_NAMES  # the registry above has one entry per name (tests/agents checks it)
# agents with no pre-execution hook: zen's guardian never sees their commands (zen/agents/unguarded.py;
# tests/agents check this against each adapter's `guarded`)
UNGUARDED = frozenset({"aider", "cmd"})


def shown(agent: str) -> str:
    """The agent's name as status and dispatch show it: `aider (unguarded)`."""
    return f"{agent} (unguarded)" if agent in UNGUARDED else agent


def get_adapter(name: str) -> AgentAdapter:
    """The adapter for agent `name` (claude, codex, aider, gemini, sim, cmd)."""
    from zen.errors import ZenError  # only on a miss: the package itself stays import-free

    key = str(getattr(name, "value", name)).strip().lower()
    if key not in _ADAPTERS:
        raise ZenError(f"unknown agent {name!r} (one of {', '.join(NAMES)})")
    module, cls = _ADAPTERS[key].split(":")
    adapter: AgentAdapter = getattr(import_module(module), cls)()
    return adapter
