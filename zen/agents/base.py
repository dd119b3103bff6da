"""The small interface every agent adapter implements.

An adapter turns a job into what tmux must run (argv, extra environment, files to write first)
and knows its agent's habits: the keys that end it gracefully and the screen patterns that say
it is asking a question, waiting for an approval, or stuck on a dialog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from zen.core.model import Task


@dataclass(frozen=True)
class LaunchContext:
    home: Path                 # the zen home
    job_id: str
    job_dir: Path              # <home>/jobs/<id>: per-job files (settings, handoff) go here
    worktree: Path             # the agent's cwd
    handoff: Path              # <job_dir>/handoff.md, already written
    task: Task
    zen_argv: list[str]        # how to invoke zen itself from a hook, e.g. ["/venv/bin/zen"]
    settings: dict[str, Any] = field(default_factory=dict)  # zen.yaml agents.<name>


@dataclass
class LaunchSpec:
    argv: list[str]                                          # run in the tmux pane, cwd = worktree
    env: dict[str, str] = field(default_factory=dict)        # added to the supervisor's environment
    files: dict[Path, str] = field(default_factory=dict)     # written (atomically) before launch
    # text to type into the pane (then Enter) once the agent first waits for input, for agents
    # with no way to take a first prompt and stay interactive (aider); None for all others
    initial_input: str | None = None


class AgentAdapter(Protocol):
    name: str
    # keys typed into the pane to end the agent gracefully (tmux send-keys words), or None = TERM
    exit_keys: list[str] | None

    def launch(self, ctx: LaunchContext) -> LaunchSpec: ...

    def classify_screen(self, screen: str) -> str | None:
        """'question' | 'approval' | 'dialog' when the visible screen shows one, else None."""
        ...
