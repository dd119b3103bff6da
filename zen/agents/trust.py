"""Folder trust for every agent that asks for it, in one place: what `zen lane trust` records and
what `zen lane add` warns about.

Claude Code, Codex and Gemini CLI each ask once per repository whether to trust it, each in its
own file; trust of a lane's main checkout covers the job worktrees zen makes from it (for Gemini,
zen passes --skip-trust only for lanes trusted this way, zen/agents/gemini.py). zen edits those
files only when the user asks, keeping everything else in them as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

# agent -> (label, module with is_trusted(repo) / trust(repo) / a path function)
AGENTS: dict[str, tuple[str, str, str]] = {
    "claude": ("Claude Code", "zen.agents.claude_trust", "claude_json"),
    "codex": ("Codex", "zen.agents.codex_trust", "config_toml"),
    "gemini": ("Gemini CLI", "zen.agents.gemini_trust", "trusted_folders"),
}


def _module(agent: str) -> Any:
    return import_module(AGENTS[agent][1])


def label(agent: str) -> str:
    return AGENTS[agent][0]


def trust_file(agent: str) -> Path:
    fn: Callable[[], Path] = getattr(_module(agent), AGENTS[agent][2])
    return fn()


def is_trusted(agent: str, repo: Path) -> bool:
    return bool(_module(agent).is_trusted(repo))


def trust(repo: Path, agents: list[str] | None = None) -> list[dict[str, Any]]:
    """Trust `repo` for each agent (default: all). One dict per agent: agent, label, file, changed."""
    out = []
    for agent in agents or list(AGENTS):
        changed = bool(_module(agent).trust(repo))
        out.append({"agent": agent, "label": label(agent), "file": str(trust_file(agent)), "changed": changed})
    return out


def untrusted(repo: Path, agents: list[str] | None = None) -> list[str]:
    return [a for a in agents or list(AGENTS) if not is_trusted(a, repo)]


def trust_note(repo: Path, lane: str | None = None) -> str | None:
    """One sentence naming the agents that do not trust `repo` yet, else None."""
    missing = untrusted(repo)
    if not missing:
        return None
    names = ", ".join(label(a) for a in missing)
    verb = "does" if len(missing) == 1 else "do"
    return (f"note: {names} {verb} not trust {Path(repo).expanduser().resolve()} yet, so such a job would "
            f"stop at its trust screen; run `zen lane trust {lane or 'NAME'}` to trust it "
            "(its worktrees are covered too)")
