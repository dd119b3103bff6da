"""`zen guard hook [--agent claude|codex|gemini] [--worktree DIR] [--home DIR]`: the PreToolUse hook.

Protocol (Claude Code and Codex, ../shared/reference/guardrails.md sections 3 and 4; Gemini CLI's
BeforeTool speaks the same, with its own tool names, see `gemini_call`):
  stdin   one JSON object: tool_name, tool_input, cwd, session_id, ...
  allow   exit 0; Claude Code: nothing on stdout; Codex and Gemini CLI: exactly `{}` on stdout
  block   exit 2, one line on stderr starting "zen guardian: " (the agent is shown it)

Both agents let the call RUN when a hook exits with anything but 2, crashes, prints malformed
output or times out. So this entry point can only ever end in two ways: an explicit allow (exit 0
after the decision core said allow) or exit 2. Malformed input, an unknown tool, a broken policy,
any exception (BaseException included, SystemExit of any code included) and the internal
deadline all exit 2 with a reason. The deadline is a SIGALRM timer whose handler writes the reason
and leaves with os._exit(2), so no code inside can swallow it.

The deadline counts from the start of this process (read from /proc), not from the moment the
timer is armed: the agent's timeout (AGENT_TIMEOUT_S, what every agent's settings give the hook)
runs from the spawn, and on a loaded machine the interpreter's own start-up can take seconds. It is
DEADLINE_S after the start, never later than AGENT_TIMEOUT_S - MARGIN_S, so the hook always blocks
before the agent would give up on it and let the call run. ZEN_GUARD_DEADLINE (seconds, the
environment of the agent process, which an agent's own commands cannot change) shortens or
lengthens it within that bound.

Codex's apply_patch is judged file by file (context.calls_for).

`writes_check` (a loader, called inside the try: the coordinator's lease check, which
zen/__main__.py hands in because the guardian sits below the coordinator) may deny a write to a
file another job holds, or allow it with a note; Claude Code gets such notes on stdout as
hookSpecificOutput.additionalContext (Codex takes no context from a PreToolUse hook: `{}`).

The resident guardian: when `zen guard serve` runs for the home (--home, else $ZEN_HOME; the
supervisor starts one), the hook is a thin client (zen/guard/resident/client.py) that hands the call to it
and prints its verdict: `verdict()` below, the same code on the same input. With no server, an
unreachable or slow one (no answer within WAIT_SHARE of the deadline: a live server on a loaded
machine is still the faster way), or one that declines, the hook decides in this process, under
the same deadline.

Self-tests: ZEN_GUARD_SELFTEST_CRASH=1 raises inside the decision path, ZEN_GUARD_SELFTEST_HANG=1
sleeps there (the deadline must fire); both must block, and both are decided in-process.

Lean: stdlib + zen.guard.* + zen.store.events (+ tree_sitter inside the core); never typer,
pydantic, ruamel or rich (tests/guard/test_hook.py asserts it). With a server, the hook loads
neither json nor typing nor the core (tests/guard/test_server.py asserts it).
"""

from __future__ import annotations

# the C module: `signal` would load enum on the lean path (and typing stays out, see below)
import _signal
import os
import sys
import time  # built in: no import cost

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing costs more than the thin client's whole start-up
    from collections.abc import Callable, Mapping
    from typing import Any

PREFIX = "zen guardian: "
AGENT_TIMEOUT_S = 10      # the hook's timeout in every agent's settings (zen.agents.settings, codex, gemini)
MARGIN_S = 1.5            # the block must be written and read before that timeout
DEADLINE_S = 6.0          # from the process's start: room for a loaded machine (20 agents on 2 cores)
WAIT_SHARE = 0.75     # of the deadline, for the server's answer; the rest to decide in-process
MAX_STDIN = 4 * 1024 * 1024
AGENTS = ("claude", "codex", "gemini")
# Gemini CLI's tools that act, as the tool (and input fields) the guardian knows them by
GEMINI_TOOLS = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}


def gemini_call(tool: str, tool_input: dict[str, object]) -> tuple[str, dict[str, object]]:
    """A Gemini CLI BeforeTool call as the guardian's tool call: run_shell_command -> Bash,
    write_file -> Write, replace -> Edit (their fields are already command, file_path, content,
    old_string, new_string). Other names pass as they are, so the core denies what it does not know."""
    name = GEMINI_TOOLS.get(tool, tool)
    if name == "Bash" and isinstance(tool_input.get("dir_path"), str) and tool_input["dir_path"]:
        # the command runs in that directory: judge it there
        tool_input = {**tool_input, "command": f"cd {_quote(str(tool_input['dir_path']))} && {tool_input.get('command')}"}
    return name, tool_input


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _block(reason: str) -> int:
    reason = " ".join(str(reason).split()) or "blocked"
    try:
        os.write(2, (PREFIX + reason + "\n").encode("utf-8", "replace"))
    except BaseException:
        pass
    return 2


def _on_deadline(signum: int, frame: object) -> None:
    _block("no decision in time (internal deadline); blocked to be safe")
    os._exit(2)


def _age() -> float:
    """Seconds since this process started (0.0 when /proc cannot say)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        # field 22, counted after the command name, which may hold spaces and parentheses
        ticks = int(stat[stat.rindex(b")") + 2:].split()[19])
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _arm_deadline() -> float:
    """Start the deadline; the seconds left until it fires."""
    seconds = DEADLINE_S
    try:
        seconds = float(os.environ.get("ZEN_GUARD_DEADLINE", DEADLINE_S))
    except ValueError:
        pass
    left = max(0.05, min(seconds, AGENT_TIMEOUT_S - MARGIN_S) - _age())
    _signal.signal(_signal.SIGALRM, _on_deadline)
    _signal.setitimer(_signal.ITIMER_REAL, left)
    return left


def _disarm_deadline() -> None:
    _signal.setitimer(_signal.ITIMER_REAL, 0)


def parse_args(argv: list[str]) -> dict[str, str]:
    """--agent, --worktree, --home (also as --opt=value), and --grant (no value: what the guardian
    allows at act-and-report or autonomous runs without the agent's own permission prompt; zen gives
    it to a job whose agent runs inside its OS sandbox). Raises ValueError on anything else."""
    opts: dict[str, str] = {"agent": "claude"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--grant":
            opts["grant"] = "1"
            i += 1
            continue
        name, eq, value = arg.partition("=")
        if name not in ("--agent", "--worktree", "--home"):
            raise ValueError(f"unknown argument {arg!r} (zen guard hook takes --agent, --worktree, --home, --grant)")
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


def read_stdin() -> bytes:
    """The hook's input, as bytes. Raises ValueError with a one-line reason."""
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise ValueError("the hook input is larger than 4 MiB")
    if not data.strip():
        raise ValueError("no hook input on stdin (expected the PreToolUse JSON)")
    return data


def parse_payload(data: bytes, here: str) -> tuple[str, dict[str, object], str]:
    """(tool_name, tool_input, cwd) of the hook input; `here` when it names no absolute cwd.
    Raises ValueError with a one-line reason."""
    # json only here: with a resident guardian the hook never parses its input itself
    import json

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
        cwd = here
    return tool, tool_input, cwd


def decide(opts: dict[str, str], data: bytes, here: str, env: Mapping[str, str],
           writes_check: Callable[[], Any] | None = None, **guard_kw: Any) -> tuple[bool, str, list[str], bool]:
    """(allowed, reason, notes, granted) for one hook input, in this process (`guard_kw`: the
    resident guardian's lock and recorder, see Guard); `granted`: allowed at a level that acts
    without asking (act-and-report, autonomous: decided now, so the kill switch ends it at once)
    for a hook told --grant. May raise: the callers turn that into a block."""
    # imported here, inside main()'s try and under its deadline: a broken or slow import of the
    # guardian must end in exit 2 like any other failure, never in an uncaught exit 1 (allow)
    from zen.guard.context import Guard, calls_for

    tool, tool_input, cwd = parse_payload(data, here)
    if opts["agent"] == "gemini":
        tool, tool_input = gemini_call(tool, tool_input)
    if tool == "Bash" and not isinstance(tool_input.get("command"), str):
        raise ValueError("the Bash call has no command (a string)")
    # which tools exist is the core's call (same answer as zen guard check): an unknown one is denied
    calls = calls_for(tool, tool_input, cwd)
    guard = Guard(home=opts.get("home"), env=env, agent=True,
                  writes_check=writes_check() if writes_check is not None else None, **guard_kw)
    decision = guard.check_all(calls, cwd, opts.get("worktree"), act=True, audit=True)
    granted = bool(opts.get("grant")) and decision.allowed is True and guard.level in GRANT_LEVELS
    return decision.allowed, decision.reason, guard.notes, granted


# the levels at which what the guardian allows runs without the agent's own prompt (DESIGN 6)
GRANT_LEVELS = frozenset({"act-and-report", "autonomous"})


def answer(agent: str, allowed: bool, reason: str, notes: list[str], granted: bool = False) -> tuple[int, str, str]:
    """(exit code, stdout, reason) in `agent`'s hook protocol. One place per agent: a new agent's
    protocol is a branch here and a name in AGENTS. `granted`: Claude Code is told to run the call
    without its own permission prompt (`permissionDecision: allow`); Codex's is set at its start."""
    if allowed is not True:
        return 2, "", reason
    if agent in ("codex", "gemini"):    # both read a JSON object on stdout; {} is "no objection"
        return 0, "{}", ""
    if notes or granted:
        import json  # lean: only a note (a lease warning) or a grant needs it

        out: dict[str, object] = {"hookEventName": "PreToolUse"}
        if granted:
            out["permissionDecision"] = "allow"
            out["permissionDecisionReason"] = "zen's guardian allows it at this job's autonomy level"
        if notes:
            out["additionalContext"] = " ".join(notes)[:9000]
        return 0, json.dumps({"hookSpecificOutput": out}), ""
    return 0, "", ""


def failure(exc: BaseException) -> str:
    """The block reason for an exception raised while deciding."""
    if isinstance(exc, ValueError):
        return f"{exc}; blocked"
    if isinstance(exc, SystemExit):
        return f"unexpected exit ({exc.code!r}) inside the guardian; blocked to be safe"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted; blocked to be safe"
    return f"internal error ({type(exc).__name__}: {exc}); blocked to be safe"


def verdict(argv: list[str], data: bytes, here: str, env: Mapping[str, str],
            writes_check: Callable[[], Any] | None = None, **guard_kw: Any) -> tuple[int, str, str]:
    """(exit code, stdout, reason) for one hook call; never raises. The resident guardian's
    decision (zen/guard/resident/server.py): the same code as the hook's own, on the caller's input."""
    try:
        opts = parse_args(argv)
        if not data.strip():
            raise ValueError("no hook input on stdin (expected the PreToolUse JSON)")
        allowed, reason, notes, granted = decide(opts, data, here, env, writes_check, **guard_kw)
        return answer(opts["agent"], allowed, reason, notes, granted)
    except BaseException as exc:  # anything at all must block
        return 2, "", failure(exc)


def _resident(opts: dict[str, str], argv: list[str], data: bytes, wait: float) -> tuple[int, str, str] | None:
    """The resident guardian's verdict, or None (none runs, or none to trust: decide here)."""
    home = opts.get("home") or os.environ.get("ZEN_HOME")
    if not home or "ZEN_GUARD_SELFTEST_CRASH" in os.environ or "ZEN_GUARD_SELFTEST_HANG" in os.environ:
        return None   # the self-tests are of this process's own decision path
    from zen.guard.resident import client  # lean: os, _socket and the layout's names

    return client.ask(os.path.abspath(home), argv, data, wait)


def leave(code: int) -> None:
    """End the hook process with `code` (0 stays 0, anything else is 2) at once: the answer is
    written and flushed by main() and the audit record is durable (fsynced) before it returns,
    so the interpreter's teardown (freeing every module, a tenth of a bare start-up) is time the
    agent waits for nothing. Nothing the hook runs leaves a thread or an unflushed file behind."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        if code == 0:
            code = _block("could not write the answer; blocked to be safe")
    os._exit(0 if code == 0 else 2)


def main(argv: list[str], writes_check: Callable[[], Any] | None = None) -> int:
    """Exit code for the agent: 0 (allowed) or 2 (blocked). Never raises, never returns 1."""
    try:
        deadline = _arm_deadline()
        opts = parse_args(argv)
        data = read_stdin()
        got = _resident(opts, argv, data, deadline * WAIT_SHARE)
        if got is None:
            allowed, reason, notes, granted = decide(opts, data, os.getcwd(), os.environ, writes_check)
            got = answer(opts["agent"], allowed, reason, notes, granted)
        code, out, reason = got
        _disarm_deadline()
        if code != 0:
            return _block(reason)
        if out:
            sys.stdout.write(out)
        sys.stdout.flush()
        return 0
    except BaseException as exc:  # anything at all must block, never exit 1
        return _block(failure(exc))
    finally:
        try:
            _disarm_deadline()
        except BaseException:
            pass
