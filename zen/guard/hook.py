"""`zen guard hook [--agent claude|codex] [--worktree DIR] [--home DIR]`: the PreToolUse hook.

Protocol (Claude Code and Codex, ../shared/reference/guardrails.md sections 3 and 4):
  stdin   one JSON object: tool_name, tool_input, cwd, session_id, ...
  allow   exit 0; Claude Code: nothing on stdout; Codex: exactly `{}` on stdout
  block   exit 2, one line on stderr starting "zen guardian: " (the agent is shown it)

Both agents let the call RUN when a hook exits with anything but 2, crashes, prints malformed
output or times out. So this entry point can only ever end in two ways: an explicit allow (exit 0
after the decision core said allow) or exit 2. Malformed input, an unknown tool, a broken policy,
any exception (BaseException included, SystemExit of any code included) and the internal
deadline (DEADLINE_S, far under the 10 s the settings configure) all exit 2 with a reason. The
deadline is a SIGALRM timer whose handler writes the reason and leaves with os._exit(2), so no
code inside can swallow it.

ZEN_GUARD_DEADLINE (seconds) can lengthen the deadline up to 4x DEADLINE_S, still under the 10 s
timeout (the environment of the agent process, which an agent's own commands cannot change).

Codex's apply_patch is judged file by file (context.calls_for).

`writes_check` (a loader, called inside the try: the coordinator's lease check, which
zen/__main__.py hands in because the guardian sits below the coordinator) may deny a write to a
file another job holds, or allow it with a note; Claude Code gets such notes on stdout as
hookSpecificOutput.additionalContext (Codex takes no context from a PreToolUse hook: `{}`).

Self-tests: ZEN_GUARD_SELFTEST_CRASH=1 raises inside the decision path, ZEN_GUARD_SELFTEST_HANG=1
sleeps there (the deadline must fire); both must block.

Lean: stdlib + zen.guard.* + zen.store.events (+ tree_sitter inside the core); never typer,
pydantic, ruamel or rich (tests/guard/test_hook.py asserts it).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

PREFIX = "zen guardian: "
DEADLINE_S = 2.0
MAX_STDIN = 4 * 1024 * 1024
AGENTS = ("claude", "codex")


def _block(reason: str) -> int:
    reason = " ".join(str(reason).split()) or "blocked"
    try:
        os.write(2, (PREFIX + reason + "\n").encode("utf-8", "replace"))
    except BaseException:
        pass
    return 2


def _on_deadline(signum: int, frame: object) -> None:
    _block(f"no decision within {DEADLINE_S:g} s (internal deadline); blocked to be safe")
    os._exit(2)


def _arm_deadline() -> None:
    seconds = DEADLINE_S
    try:
        seconds = float(os.environ.get("ZEN_GUARD_DEADLINE", DEADLINE_S))
    except ValueError:
        pass
    signal.signal(signal.SIGALRM, _on_deadline)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, min(seconds, DEADLINE_S * 4)))


def _disarm_deadline() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)


def parse_args(argv: list[str]) -> dict[str, str]:
    """--agent, --worktree, --home (also as --opt=value). Raises ValueError on anything else."""
    opts: dict[str, str] = {"agent": "claude"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name not in ("--agent", "--worktree", "--home"):
            raise ValueError(f"unknown argument {arg!r} (zen guard hook takes --agent, --worktree, --home)")
        if not eq:
            i += 1
            if i >= len(argv):
                raise ValueError(f"{name} needs a value")
            value = argv[i]
        opts[name[2:]] = value
        i += 1
    if opts["agent"] not in AGENTS:
        raise ValueError(f"--agent must be one of {', '.join(AGENTS)}, not {opts['agent']!r}")
    return opts


def read_payload() -> tuple[str, dict[str, object], str]:
    """(tool_name, tool_input, cwd) from stdin. Raises ValueError with a one-line reason."""
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise ValueError("the hook input is larger than 4 MiB")
    if not data.strip():
        raise ValueError("no hook input on stdin (expected the PreToolUse JSON)")
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise ValueError(f"the hook input is not valid JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ValueError("the hook input is not a JSON object")
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise ValueError("the hook input names no tool_name")
    tool_input = payload.get("tool_input", {})
    if not isinstance(tool_input, dict):
        raise ValueError("tool_input is not a JSON object")
    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        cwd = os.getcwd()
    return tool, tool_input, cwd


def decide_hook(argv: list[str], writes_check: Callable[[], Any] | None = None
                ) -> tuple[bool, str, str, list[str]]:
    """(allowed, reason, agent, notes) for the call on stdin. May raise: main() turns that into a block."""
    # imported here, inside main()'s try and under its deadline: a broken or slow import of the
    # guardian must end in exit 2 like any other failure, never in an uncaught exit 1 (allow)
    from zen.guard.context import Guard, calls_for

    opts = parse_args(argv)
    tool, tool_input, cwd = read_payload()
    if tool == "Bash" and not isinstance(tool_input.get("command"), str):
        raise ValueError("the Bash call has no command (a string)")
    # which tools exist is the core's call (same answer as zen guard check): an unknown one is denied
    calls = calls_for(tool, tool_input, cwd)
    guard = Guard(home=opts.get("home"), agent=True,
                  writes_check=writes_check() if writes_check is not None else None)
    decision = guard.check_all(calls, cwd, opts.get("worktree"), act=True, audit=True)
    return decision.allowed, decision.reason, opts["agent"], guard.notes


def main(argv: list[str], writes_check: Callable[[], Any] | None = None) -> int:
    """Exit code for the agent: 0 (allowed) or 2 (blocked). Never raises, never returns 1."""
    try:
        _arm_deadline()
        allowed, reason, agent, notes = decide_hook(argv, writes_check)
        _disarm_deadline()
        if allowed is not True:
            return _block(reason)
        if agent == "codex":
            sys.stdout.write("{}")
        elif notes:
            sys.stdout.write(json.dumps({"hookSpecificOutput": {
                "hookEventName": "PreToolUse", "additionalContext": " ".join(notes)[:9000]}}))
        sys.stdout.flush()
        return 0
    except ValueError as exc:
        return _block(f"{exc}; blocked")
    except BaseException as exc:  # anything at all must block, never exit 1
        if isinstance(exc, SystemExit):
            return _block(f"unexpected exit ({exc.code!r}) inside the guardian; blocked to be safe")
        if isinstance(exc, KeyboardInterrupt):
            return _block("interrupted; blocked to be safe")
        return _block(f"internal error ({type(exc).__name__}: {exc}); blocked to be safe")
    finally:
        try:
            _disarm_deadline()
        except BaseException:
            pass
