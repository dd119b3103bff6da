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
    repo: Path | None = None   # the lane's main checkout the worktree was made from
    lane: dict[str, Any] = field(default_factory=dict)      # zen.yaml lanes.<name> (empty: a repo)
    extra_args: tuple[str, ...] = ()   # options zen adds for the job (Codex: its OTel exporter)
    level: str = "suggest"     # the job's autonomy level at its start (observe under the kill switch)
    wall: bool = True          # the agent runs inside an OS sandbox (zen/agents/wall.py; lane `sandbox: off`)


@dataclass
class LaunchSpec:
    argv: list[str]                                          # run in the tmux pane, cwd = worktree
    env: dict[str, str] = field(default_factory=dict)        # added to the supervisor's environment
    files: dict[Path, str] = field(default_factory=dict)     # written (atomically) before launch
    # text to type into the pane (then Enter) once the agent first waits for input, for agents
    # with no way to take a first prompt and stay interactive (aider); None for all others
    initial_input: str | None = None
    # inside zen's own wall (zen/agents/wall.py; Gemini CLI): what the agent itself needs besides
    # its worktree, read-write (its own home in the job) and read-only (files of that home zen
    # wrote, which the agent must not change); empty for agents zen does not wall itself
    wall_writable: tuple[Path, ...] = ()
    wall_read_only: tuple[Path, ...] = ()


class AgentAdapter(Protocol):
    """Besides these, an adapter may have (read with getattr, so every default holds):

    - `guarded: bool` (default False): every shell command and file edit of the agent reaches
      zen's guardian before it runs (a pre-execution hook); an agent without one is *unguarded*
      and starts only inside zen's sandbox or on a lane that accepts it (zen/agents/unguarded.py);
    - `turn_hooks: bool` (default False): the agent's hooks report the end of each turn (Claude's
      Stop, Codex's notify, Gemini's AfterAgent, aider's notifications command), so a silence
      read off its terminal does not end a turn a goal counts (zen.orchestration.loop.goals);
    - `paste_input: bool` (default False): typed input goes as one bracketed paste;
    - `key_pause_s: float` (default 0): the pause before Enter and between exit keys (agents that
      take a burst of keys for a paste swallow an Enter that comes with it);
    - `output_state(data: bytes) -> (state, reason) | None`: the last turn state the agent itself
      wrote into a chunk of its output (a terminal escape sequence), read before output activity;
    - `input_ready(screen: str) -> bool` (default: always): whether the screen shows the agent at
      its input box, so the first prompt (LaunchSpec.initial_input) may be typed.
    """

    name: str
    # keys typed into the pane to end the agent gracefully (tmux send-keys words), or None = TERM
    exit_keys: list[str] | None

    def launch(self, ctx: LaunchContext) -> LaunchSpec: ...

    def classify_screen(self, screen: str) -> str | None:
        """'question' | 'approval' | 'dialog' when the visible screen shows one, else None."""
        ...


def typing_of(adapter: object | None) -> dict[str, Any]:
    """How to type into this agent's pane (the options of Tmux.send_text): its adapter's habits."""
    if adapter is None:
        return {}
    return {"paste": bool(getattr(adapter, "paste_input", False)),
            "enter_delay_s": float(getattr(adapter, "key_pause_s", 0.0))}
