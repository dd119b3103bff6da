"""The programs zen needs on this machine, for `zen doctor`: each one found, or how to install it
on Debian/Ubuntu (apt-get) and on macOS (Homebrew).

git and tmux are zen's own needs everywhere. bubblewrap (`bwrap`) and socat are Linux-only: Claude
Code's native sandbox uses them there (macOS has Seatbelt built in), and zen sandboxes agents that
have no hook with bwrap. chromium (and its chromedriver) only runs the dashboard's web tests.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass

OK, WARN, FAULT = "ok", "warn", "fault"


@dataclass(frozen=True)
class Tool:
    name: str                 # what to call it
    binary: str               # what to look for on PATH
    why: str
    apt: str                  # Debian/Ubuntu package(s)
    brew: str | None          # Homebrew's install command's arguments; None: not needed on macOS
    needed: bool = True       # False: only the tests need it (a missing one is a warning)


TOOLS = (
    Tool("git", "git", "lanes, worktrees and review branches are git's", "git", "git"),
    Tool("tmux", "tmux", "every agent runs in a tmux session", "tmux", "tmux"),
    Tool("bubblewrap", "bwrap", "Claude Code's native sandbox uses it on Linux, and zen sandboxes agents "
         "with no hook in it", "bubblewrap", None),
    Tool("socat", "socat", "Claude Code's native sandbox uses it on Linux (its network proxy)", "socat", None),
    Tool("chromium", "chromium", "only the dashboard's web tests (tests/web) drive it, with chromedriver",
         "chromium chromium-driver", "--cask chromium chromedriver", needed=False),
)


@dataclass(frozen=True)
class Found:
    check: str
    status: str               # OK, WARN or FAULT
    message: str
    fix: str = ""             # the command that fixes it
    where: str = ""           # where that command applies ("Debian/Ubuntu", "macOS"), if not anywhere

    def to_json(self) -> dict[str, str]:
        return {"check": self.check, "status": self.status, "message": self.message, "fix": self.fix,
                "where": self.where}


def install_hint(tool: Tool, platform: str) -> tuple[str, str]:
    """(command, where it applies): apt-get on Linux, Homebrew on macOS, both elsewhere."""
    apt = f"sudo apt-get install {tool.apt}"
    brew = f"brew install {tool.brew}" if tool.brew else ""
    if platform == "darwin" and brew:
        return brew, "macOS"
    if platform.startswith("linux") or not brew:
        return apt, "Debian/Ubuntu"
    return f"{apt} (Debian/Ubuntu) or {brew} (macOS)", ""


def check_tools(platform: str = sys.platform,
                which: Callable[[str], str | None] = shutil.which) -> list[Found]:
    """One Found per tool: where it is, or what it is for and how to install it."""
    out = []
    for tool in TOOLS:
        label = tool.name if tool.name == tool.binary else f"{tool.name} ({tool.binary})"
        if tool.brew is None and platform == "darwin":
            out.append(Found(tool.name, OK, f"{label} is not needed on macOS (Claude Code's sandbox "
                                            "uses Seatbelt there)"))
            continue
        path = which(tool.binary)
        if path:
            out.append(Found(tool.name, OK, f"{label} found at {path}"))
            continue
        status = FAULT if tool.needed else WARN
        out.append(Found(tool.name, status, f"{label} is not installed: {tool.why}",
                         *install_hint(tool, platform)))
    return out
