"""The wall behind the guardian (DESIGN 6): what one job's agent may reach, whichever sandbox holds it.

zen.yaml lanes.<name>:
    sandbox: on            # the default: every agent of the lane runs inside an OS sandbox
    sandbox: off           # none: its jobs are shown as unguarded (the lane's owner accepts that)
    network: [HOST[:PORT], ...]   # hosts the agents' commands may reach besides the model's API

By construction an agent reaches its worktree (read-write), what it needs to run (read-only: the
system, its own install, the lane's git metadata, the job's handoff) and the model's API; never
zen's home (spool, policy, approvals, control, other timelines, logs), other jobs' worktrees, the
supervisor or a sibling's processes, the lane's refs, config or hooks, or the user's credentials.

Which sandbox holds it: Claude Code's own (its settings, zen/agents/settings.py), Codex's own
(workspace-write, zen/agents/codex.py), zen's bubblewrap for the rest (zen/adapters/sandbox.py).
This module says what the wall holds; each of those says it in its own words.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import zen
from zen.adapters.sandbox import Forward, Wall, forwards_work, works
from zen.store import layout

# the user's credential stores, hidden (bubblewrap) or denied for reading (Claude's sandbox), below
# the user's home; the whole home is hidden by bubblewrap, so this list matters where only named
# paths can be denied
SECRET_DIRS = (".ssh", ".aws", ".gnupg", ".config/gcloud", ".azure", ".kube", ".docker", ".netrc",
               ".git-credentials", ".config/git/credentials", ".config/gh", ".config/glab-cli",
               ".password-store", ".config/op", ".vault-token", ".npmrc", ".pypirc", ".terraform.d",
               ".claude.json", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",
               ".local/share/keyrings", ".mozilla", ".config/google-chrome", ".config/chromium")
# the model APIs' base URLs an agent's environment may name: each one is forwarded into the wall
API_URL_VARS = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_BASE", "GOOGLE_GEMINI_BASE_URL",
                "GEMINI_API_BASE", "CODE_ASSIST_ENDPOINT", "OLLAMA_API_BASE", "AIDER_OPENAI_API_BASE",
                "ANTHROPIC_API_BASE", "OPENROUTER_API_BASE")
# the providers' own hosts, reached when no base URL says otherwise
API_HOSTS = {"aider": ("api.openai.com", "api.anthropic.com"),
             "gemini": ("generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"),
             "claude": ("api.anthropic.com",), "codex": ("api.openai.com", "chatgpt.com")}


def enabled(lane: Mapping[str, Any] | None) -> bool:
    """Whether the lane keeps the wall (`sandbox: off` turns it off; anything else keeps it)."""
    value = (lane or {}).get("sandbox", True)
    if isinstance(value, str):
        return value.strip().lower() not in ("off", "false", "no", "0")
    return value is not False


def lane_hosts(lane: Mapping[str, Any] | None) -> list[str]:
    raw = (lane or {}).get("network") or []
    if isinstance(raw, str):
        raw = [raw]
    return [str(h).strip() for h in raw if str(h).strip()]


def _forward(spec: str, default_ports: Iterable[int] = (443, 80)) -> list[Forward]:
    """`host`, `host:port` or a URL as the endpoints it names."""
    text = spec.strip()
    if "://" in text:
        parts = urlsplit(text)
        if not parts.hostname:
            return []
        return [Forward(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))]
    host, _, port_text = text.rpartition(":") if text.count(":") == 1 else (text, "", "")
    if port_text.isdigit():
        return [Forward(host, int(port_text))]
    return [Forward(text, p) for p in default_ports]


def api_endpoints(agent: str, env: Mapping[str, str]) -> list[Forward]:
    """The model API endpoints the agent talks to: the base URLs its environment names, else its
    provider's hosts."""
    named = [f for var in API_URL_VARS if env.get(var) for f in _forward(env[var])]
    if named:
        return named
    return [Forward(h, 443) for h in API_HOSTS.get(agent, ())]


def forwards(agent: str, env: Mapping[str, str], lane: Mapping[str, Any] | None) -> tuple[Forward, ...]:
    seen: dict[tuple[str, int], Forward] = {}
    for f in [*api_endpoints(agent, env), *(f for h in lane_hosts(lane) for f in _forward(h))]:
        seen.setdefault((f.host, f.port), f)
    return tuple(seen.values())


def install_root(exe: str) -> Path | None:
    """The tree an agent's program loads from (a venv or a node_modules tree), bound read-only."""
    found = shutil.which(exe)
    if not found:
        return None
    real = Path(os.path.realpath(found))
    for parent in real.parents:
        if (parent / "pyvenv.cfg").exists() or parent.name == "node_modules":
            return parent
    return real.parent


# the agents with a pre-execution hook that zen itself walls (they have no OS sandbox of their own):
# their hooks reach the resident guardian through the socket zen binds in (GUARD_WALL_DIR)
ZEN_WALLED = frozenset({"gemini"})


def guardian_bind(zen_home: Path) -> tuple[Path, Path]:
    """(outside, inside): control/guard-wall/ (the resident guardian's socket and lock, nothing
    else) bound read-only where the hook looks for them, <home>/control."""
    control = zen_home / layout.CONTROL
    outside = control / layout.GUARD_WALL_DIR
    outside.mkdir(mode=0o700, exist_ok=True)   # the guardian fills it when it starts (again)
    return outside, control


def _program(exe: str) -> list[Path]:
    """What running `exe` loads from: its install tree, and its real file's folder outside it."""
    root = install_root(exe)
    if root is None:
        return []
    out = [root]
    real = Path(os.path.realpath(shutil.which(exe) or exe))
    if not str(real).startswith(str(root)):
        out.append(real.parent)
    return out


def job_wall(*, agent: str, argv: list[str], worktree: Path, zen_home: Path, handoff: Path,
             git_dir: Path | None, env: Mapping[str, str], lane: Mapping[str, Any] | None,
             run_dir: Path | None, user_home: Path | None = None,
             writable: tuple[Path, ...] = (), read_only: tuple[Path, ...] = ()) -> Wall:
    """zen's bubblewrap wall for one job's agent. `writable` / `read_only`: what the agent needs of
    its own besides (its home in the job, the settings zen wrote there)."""
    home = user_home or Path(os.path.expanduser("~"))
    ro: list[Path] = [p for exe in argv[:1] for p in _program(exe)]
    binds: tuple[tuple[Path, Path], ...] = ()
    if agent in ZEN_WALLED:
        # its hooks run zen inside the wall: zen's own install, and the resident guardian's socket
        ro += [*_program(sys.executable), Path(sys.prefix), Path(sys.base_prefix),
               Path(zen.__file__).resolve().parent.parent]
        binds = (guardian_bind(zen_home),)
    if git_dir is not None:
        ro.append(git_dir)
    # the user's git identity (aider writes one into the repository when it finds none), the handoff
    ro += [home / ".gitconfig", home / ".config" / "git" / "config", handoff]
    fwd = forwards(agent, env, lane) if run_dir is not None else ()
    hide = tuple(sorted({zen_home, home}, key=lambda p: len(p.parts)))   # the outer one first
    ro += list(read_only)
    return Wall(worktree=worktree, hide=hide, writable=writable, read_only=tuple(ro), binds=binds,
                network="none", forwards=fwd, run_dir=run_dir, home=home)


# the agents whose wall is Claude Code's own sandbox, which needs bubblewrap and socat on Linux
CLAUDE_SANDBOXED = frozenset({"claude"})


def spawn_check(agent: str, lane_name: str | None, lane: Mapping[str, Any] | None) -> tuple[str, str] | None:
    """("PASS" | "FAIL", sentence) on whether the agent's wall can stand on this machine; None when
    there is nothing to check (a lane without the wall, an agent whose wall is its own binary's)."""
    if agent not in CLAUDE_SANDBOXED or not enabled(lane) or sys.platform == "darwin":
        return None   # macOS: Claude Code's sandbox is Seatbelt, part of the system
    where = f"lane {lane_name}" if lane_name else "this repository"
    for ok, why in (works(), forwards_work()):
        if not ok:
            return "FAIL", (f"Claude Code's sandbox, the wall of every job on {where}, cannot start here: {why}; "
                            f"or turn the wall off for the lane (sandbox: off) and run its agents unguarded")
    return "PASS", "Claude Code runs inside its own sandbox (bubblewrap and socat are here)"
