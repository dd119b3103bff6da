"""Agents without a pre-execution hook (aider, any `cmd`): zen's guardian never sees what they
run or edit, so they are shown as *unguarded* and start only where a lane says how.

zen.yaml lanes.<name>:
    unguarded: sandbox      # the default: start them inside zen's OS sandbox (bubblewrap)
    unguarded: accept       # start them as they are: the lane's owner accepts that
    unguarded: refuse       # never start them on this lane
    unguarded_shell: true   # let such an agent run shell commands (aider's are off otherwise)

The sandbox (bubblewrap, Debian's `bubblewrap`): the whole file system read-only, the job's
worktree the only writable place, the user's home and zen's home hidden behind empty folders
(so no credentials, no policy, no timelines), /tmp private; what the agent needs to run (its own
install, the lane's git metadata, the job's handoff) is bound read-only. Inside it the agent's
hooks cannot write zen's timeline, so turns are told by its output.

`cmd` runs the command a human typed at `zen dispatch --cmd`: it is shown as unguarded, and it is
that human's explicit choice, so it starts on every lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zen.adapters import sandbox
from zen.agents import wall

MODES = ("sandbox", "accept", "refuse")
HUMAN_CHOSEN = frozenset({"cmd"})


def is_guarded(agent: str) -> bool:
    """Whether the agent's every command and edit reaches zen's guardian before it runs."""
    from zen.agents import get_adapter  # the registry imports adapters lazily, by name

    return bool(getattr(get_adapter(agent), "guarded", False))


def mode(lane: Mapping[str, Any] | None) -> str:
    if not wall.enabled(lane) and not (lane or {}).get("unguarded"):
        return "accept"   # `sandbox: off`: the lane's owner runs its agents as they are
    value = str((lane or {}).get("unguarded") or "sandbox").strip().lower()
    return value if value in MODES else "refuse"


def sandbox_works() -> tuple[bool, str]:
    """(usable, why not): bubblewrap is installed and can build the whole wall here, and socat is
    there to carry the model's API into it."""
    return sandbox.ready()


def spawn_check(agent: str, lane_name: str | None, lane: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """("PASS" | "WARN" | "FAIL", sentence) for starting `agent` on this lane; None when the agent
    is guarded (nothing to say)."""
    if is_guarded(agent):
        return None
    where = f"lane {lane_name}" if lane_name else "this repository"
    shell = "on" if (lane or {}).get("unguarded_shell") else "off (lanes.<name>.unguarded_shell: true turns them on)"
    head = f"{agent} has no pre-execution hook, so zen's guardian does not see its commands or edits"
    if agent in HUMAN_CHOSEN:
        return "WARN", f"unguarded: {head}; it runs the command a human gave at dispatch"
    m = mode(lane)
    if m == "accept":
        return "WARN", f"unguarded: {head}; {where} accepts that (unguarded: accept); its shell commands are {shell}"
    if m == "sandbox":
        ok, why = sandbox_works()
        if ok:
            return "PASS", (f"unguarded: {head}; it runs inside zen's sandbox (writable worktree only); "
                            f"its shell commands are {shell}")
        return "FAIL", (f"unguarded: {head}, and {where} starts such agents only inside zen's sandbox, but "
                        f"{why}; or set `unguarded: accept` on the lane to start it as it is")
    return "FAIL", f"unguarded: {head}, and {where} refuses such agents (unguarded: refuse)"


def lane_check(lane: Mapping[str, Any]) -> tuple[str, str]:
    """(status, sentence) for `zen preflight`: how the lane starts agents without a pre-execution
    hook (aider), and whether their shell commands run."""
    shell = ("their shell commands run (unguarded_shell)" if lane.get("unguarded_shell")
             else "aider's shell commands are off")
    m = mode(lane)
    if m == "accept":
        return "WARN", f"aider runs unguarded here (unguarded: accept): zen's guardian does not see it; {shell}"
    if m == "refuse":
        return "PASS", "agents without a pre-execution hook (aider) are refused here (unguarded: refuse)"
    ok, why = sandbox_works()
    if ok:
        return "PASS", f"aider runs inside zen's sandbox here (writable worktree only); {shell}"
    return "FAIL", (f"aider would have to run inside zen's sandbox here, but {why}; "
                    "or set `unguarded: accept` on the lane")


def sandbox_argv(argv: list[str], *, worktree: Path, zen_home: Path, handoff: Path,
                 git_dir: Path | None, user_home: Path | None = None, agent: str = "aider",
                 env: Mapping[str, str] | None = None, lane: Mapping[str, Any] | None = None,
                 run_dir: Path | None = None, writable: tuple[Path, ...] = (),
                 read_only: tuple[Path, ...] = ()) -> list[str]:
    """`argv` run inside zen's wall (zen/agents/wall.py): read-only everything, the worktree
    writable, the user's and zen's homes hidden, /tmp private, no capabilities, its own pid, IPC and
    network namespaces; the agent's own install, the lane's git metadata, the user's git settings and
    the handoff bound read-only; with a `run_dir`, the model's API (the base URLs in `env`) and the
    lane's `network:` hosts forwarded in."""
    w = wall.job_wall(agent=agent, argv=argv, worktree=worktree, zen_home=zen_home, handoff=handoff,
                      git_dir=git_dir, env=env or {}, lane=lane, run_dir=run_dir, user_home=user_home,
                      writable=writable, read_only=read_only)
    return sandbox.argv(w, argv)
