"""The simulated agent: a real program that follows a script and behaves like Claude Code towards zen.

    python -m zen.agents.simagent --settings jobs/<id>/claude-settings.json --script jobs/<id>/sim-script.json

It reads the same `--settings` file Claude Code would get and fires the same hooks, the same way:
each matching command runs through `sh -c` with the environment inherited and a Claude-shaped JSON
payload on stdin; all hooks of one event run in parallel; a PreToolUse hook blocks a tool call by
exiting 2 (reason on stderr) or answering permissionDecision "deny"; any other failure, a timeout
included, lets the call proceed (Claude fails open, so the guardian must fail closed itself). A
hookSpecificOutput.additionalContext goes into its "context" as Claude's would: printed as
`hook context: TEXT` and recorded in the transcript.

Script steps (a JSON list of one-key objects, extra keys are options of that step):
    say: TEXT                     print TEXT (an assistant message)
    sleep: SECONDS                pause
    busy: SECONDS                 print a progress line every 0.2 s for SECONDS (output activity)
    write: {path, content}        PreToolUse(Write), then create the file
    edit: {path, old, new}        PreToolUse(Edit), then replace old with new in the file
    bash: COMMAND                 PreToolUse(Bash), then `bash -c COMMAND` in the cwd, output printed
    commit: MESSAGE               PreToolUse(Bash) for `git add -A && git commit`, then run it
    ask: QUESTION                 print it, fire Stop, wait for a line on stdin, fire UserPromptSubmit
        expect: TEXT              (option) print whether the answer contains TEXT
        otherwise_exit: CODE      (option) exit with CODE when it does not
    notify: MESSAGE               fire Notification (option type: permission_prompt by default)
    wait: true                    idle at the prompt: fire Stop, then each stdin line is a new turn
                                  ("ok: LINE"); "/exit" ends the session with 0
    wait: {turns: [[STEPS], ...]} the same, but turn N (from 1) runs the Nth list of steps (the last
                                  one again once they run out); "{turn}" in their text is N
    mcp: TOOL                     call zen's MCP tool TOOL (PreToolUse(mcp__zen__TOOL) first) on the
        args: {...}               server the --mcp-config file names, started at the first call; in
                                  args "$spawned" is the ids agent_spawn returned so far
        as: JOB                   (option) on a server of its own making, started like zen's but
                                  naming job JOB: what an agent forging its identity would do
    loop: [STEPS]                 run the steps again and again
        until: PATH               (option) stop before a round once PATH exists
        max: N                    (option) at most N rounds (1000 by default)
    exit: CODE                    fire Stop and SessionEnd, exit with CODE
At the start it fires UserPromptSubmit with the prompt ($ZEN_PROMPT or --prompt); after the last
step it fires Stop and SessionEnd and exits 0. SIGTERM fires SessionEnd and exits 143, like Claude.
A Stop hook that answers {"decision": "block", "reason": TEXT} keeps it going, as Claude Code does:
TEXT is its next prompt (a turn of a `wait` step, or the answer an `ask` step waits for).

Start-up must be fast: standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from zen.agents.simmcp import McpClient

PROGRESS_INTERVAL_S = 0.2
DEFAULT_HOOK_TIMEOUT_S = 600.0  # Claude Code's default for command hooks


class Terminated(Exception):
    pass


def default_script(prompt: str) -> list[dict[str, Any]]:
    """What the sim does with no script: note the prompt in NOTES.md, commit it, exit 0."""
    first = prompt.strip().splitlines()[0] if prompt.strip() else "the task"
    return [
        {"say": f"Working on: {first}"},
        {"write": {"path": "NOTES.md", "content": f"# Notes\n\n{prompt.rstrip()}\n"}},
        {"commit": f"Add notes for: {first[:60]}"},
        {"say": "Done."},
        {"exit": 0},
    ]


# -- hooks ---------------------------------------------------------------------------------------

_PLAIN_MATCHER = re.compile(r"^[A-Za-z0-9_\- ,|]*$")


def matcher_matches(matcher: str | None, name: str | None) -> bool:
    """Claude Code's rule: empty or "*" = all; only names and | , = exact names; else a regex."""
    if matcher is None or matcher in ("", "*"):
        return True
    if name is None:
        return False
    if _PLAIN_MATCHER.match(matcher):
        names = {part.strip() for part in re.split(r"[|,]", matcher) if part.strip()}
        return name in names
    try:
        return re.search(matcher, name) is not None
    except re.error:
        return False


class Hooks:
    def __init__(self, settings: dict[str, Any], base: dict[str, Any], cwd: Path) -> None:
        self.hooks = {} if settings.get("disableAllHooks") else (settings.get("hooks") or {})
        self.base = base
        self.cwd = cwd

    def fire(self, event: str, match: str | None = None, **fields: Any) -> list[tuple[int, str, str]]:
        """Run every handler of `event` whose matcher fits `match`; (exit code, stdout, stderr) each."""
        payload = {**self.base, "hook_event_name": event, **fields}
        data = json.dumps(payload)
        commands: list[tuple[str, float]] = []
        for group in self.hooks.get(event) or []:
            if not matcher_matches(group.get("matcher"), match):
                continue
            for h in group.get("hooks") or []:
                if h.get("type", "command") == "command" and h.get("command"):
                    entry = (str(h["command"]), float(h.get("timeout") or DEFAULT_HOOK_TIMEOUT_S))
                    if entry not in commands:  # identical handlers run once
                        commands.append(entry)
        results: list[tuple[int, str, str]] = [(0, "", "")] * len(commands)

        def run(i: int, command: str, timeout: float) -> None:
            try:
                r = subprocess.run(["sh", "-c", command], input=data, capture_output=True, text=True,
                                   cwd=self.cwd, timeout=timeout, start_new_session=True)
                results[i] = (r.returncode, r.stdout, r.stderr)
            except subprocess.TimeoutExpired:
                results[i] = (-1, "", f"hook timed out after {timeout:g}s")
            except OSError as exc:
                results[i] = (127, "", str(exc))

        threads = [threading.Thread(target=run, args=(i, c, t), daemon=True)
                   for i, (c, t) in enumerate(commands)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results


def pre_tool_decision(results: list[tuple[int, str, str]]) -> tuple[str, str]:
    """Combine PreToolUse answers like Claude: deny > ask > allow; exit 2 = deny; errors fail open."""
    decision, reason = "allow", ""
    rank = {"allow": 0, "ask": 1, "deny": 2}
    for code, out, err in results:
        this, why = "allow", ""
        if code == 2:
            this, why = "deny", err.strip() or "blocked by a hook"
        elif code == 0 and out.lstrip().startswith("{"):
            try:
                answer = json.loads(out)
            except ValueError:
                answer = {}
            spec = answer.get("hookSpecificOutput") or {}
            d = spec.get("permissionDecision")
            if d in rank:
                this, why = d, str(spec.get("permissionDecisionReason") or "")
            elif answer.get("decision") == "block":  # the deprecated form
                this, why = "deny", str(answer.get("reason") or "")
        if rank[this] > rank[decision]:
            decision, reason = this, why
    return decision, reason


def json_answers(results: list[tuple[int, str, str]]) -> list[dict[str, Any]]:
    """The JSON objects printed by the hooks that exited 0 (the others answered nothing)."""
    out = []
    for code, stdout, _ in results:
        if code != 0 or not stdout.lstrip().startswith("{"):
            continue
        try:
            answer = json.loads(stdout)
        except ValueError:
            continue
        if isinstance(answer, dict):
            out.append(answer)
    return out


def additional_context(results: list[tuple[int, str, str]]) -> list[str]:
    """hookSpecificOutput.additionalContext of the hooks that exited 0 with JSON."""
    texts = ((a.get("hookSpecificOutput") or {}).get("additionalContext") for a in json_answers(results))
    return [t for t in texts if isinstance(t, str) and t]


def stop_block(results: list[tuple[int, str, str]]) -> str | None:
    """The reason of a Stop hook that answered decision "block" (Claude then goes on with it)."""
    for answer in json_answers(results):
        if answer.get("decision") == "block" and answer.get("reason"):
            return str(answer["reason"])
    return None


# -- the agent -----------------------------------------------------------------------------------

class SimAgent:
    def __init__(self, settings: dict[str, Any], script: list[dict[str, Any]], prompt: str,
                 cwd: Path, session_id: str, transcript: Path, mcp_config: dict[str, Any] | None = None) -> None:
        self.script = script
        self.mcp = McpClient(mcp_config)
        self.mcp_config = mcp_config
        self.forged: dict[str, McpClient] = {}
        self.spawned: list[str] = []
        self.turn = 1
        self.prompt = prompt
        self.cwd = cwd
        self.transcript = transcript
        self.last_message = ""
        self.hooks = Hooks(settings, {
            "session_id": session_id,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "permission_mode": "acceptEdits",
        }, cwd)

    # output ---------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        self.last_message = text
        print(f"⏺ {text}", flush=True)
        self._record("assistant", text)

    def _record(self, role: str, text: str) -> None:
        """A Claude-shaped transcript line; assistant lines carry a made-up but plausible usage
        (about 4 characters a token), so zen's cost tracking has something to read."""
        line: dict[str, Any] = {"type": role, "timestamp": time.time(), "uuid": str(uuid.uuid4()),
                                "message": {"role": role, "content": [{"type": "text", "text": text}]}}
        if role == "assistant":
            line["requestId"] = f"req_sim_{uuid.uuid4().hex[:16]}"
            line["message"].update({
                "id": f"msg_sim_{uuid.uuid4().hex[:16]}", "model": "sim",
                "usage": {"input_tokens": 50 + len(self.prompt) // 4, "output_tokens": 1 + len(text) // 4,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            })
        try:
            # a transcript is a record (it sits in the job's folder): private, as Claude Code's are
            with open(os.open(self.transcript, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a") as f:
                f.write(json.dumps(line) + "\n")
        except OSError:
            pass

    # turns ----------------------------------------------------------------------------------
    def user_turn(self, text: str) -> None:
        print(f"> {text}", flush=True)
        self._record("user", text)
        self.hooks.fire("UserPromptSubmit", prompt=text)

    def stop(self) -> str | None:
        """Fire Stop; a hook's "block" reason comes back (the next prompt), else None."""
        return stop_block(self.hooks.fire("Stop", stop_hook_active=False,
                                          last_assistant_message=self.last_message, background_tasks=[]))

    def end(self, code: int, reason: str = "other") -> int:
        self.stop()
        self.hooks.fire("SessionEnd", reason=reason)
        return code

    def read_line(self) -> str | None:
        line = sys.stdin.readline()
        if not line:
            return None
        return line.rstrip("\r\n")

    # tools ----------------------------------------------------------------------------------
    def tool(self, name: str, tool_input: dict[str, Any]) -> bool:
        """Ask the PreToolUse hooks; True when the call may run."""
        tool_use_id = f"toolu_sim_{uuid.uuid4().hex[:16]}"
        results = self.hooks.fire("PreToolUse", match=name, tool_name=name, tool_input=tool_input,
                                  tool_use_id=tool_use_id)
        decision, reason = pre_tool_decision(results)
        for text in additional_context(results):  # Claude adds it to the model's context
            print(f"hook context: {text}", flush=True)
            self._record("user", f"PreToolUse:{name} hook additional context: {text}")
        if decision == "ask":
            decision = self.permission_prompt(name, tool_input)
            reason = reason or "the user said no"
        if decision == "deny":
            print(f"blocked: {reason}", flush=True)
            self._record("user", f"PreToolUse:{name} hook error: {reason}")
            return False
        return True

    def permission_prompt(self, name: str, tool_input: dict[str, Any]) -> str:
        """Claude's permission dialog: PermissionRequest fires, a line answers it (1/y = yes)."""
        shown = tool_input.get("command") or tool_input.get("file_path") or ""
        print(f" {name}\n   {shown}\n Do you want to proceed?\n ❯ 1. Yes\n"
              f"   2. No, and tell Claude what to do differently (esc)", flush=True)
        self.hooks.fire("PermissionRequest", tool_name=name, tool_input=tool_input)
        answer = self.read_line()
        return "allow" if answer is not None and answer.strip().lower() in ("1", "y", "yes") else "deny"

    def path(self, p: str) -> Path:
        q = Path(p)
        return q if q.is_absolute() else self.cwd / q

    # steps ----------------------------------------------------------------------------------
    def run(self) -> int:
        self.user_turn(self.prompt)
        code = self.steps(self.script)
        return self.end(0) if code is None else code

    def steps(self, steps: Iterable[dict[str, Any]]) -> int | None:
        """Run `steps` in order: the exit code of one that ends the session, else None."""
        for step in steps:
            if (code := self.step(step)) is not None:
                return code
        return None

    def step(self, step: dict[str, Any]) -> int | None:
        if "say" in step:
            self.say(str(step["say"]))
        elif "sleep" in step:
            time.sleep(float(step["sleep"]))
        elif "busy" in step:
            deadline = time.monotonic() + float(step["busy"])
            n = 0
            while time.monotonic() < deadline:
                n += 1
                print(f"✻ Working… ({n})", flush=True)
                time.sleep(PROGRESS_INTERVAL_S)
        elif "write" in step:
            spec = step["write"]
            target = self.path(str(spec["path"]))
            content = str(spec.get("content", ""))
            if self.tool("Write", {"file_path": str(target), "content": content}):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
                print(f"wrote {spec['path']}", flush=True)
        elif "edit" in step:
            spec = step["edit"]
            target = self.path(str(spec["path"]))
            old, new = str(spec.get("old", "")), str(spec.get("new", ""))
            if self.tool("Edit", {"file_path": str(target), "old_string": old, "new_string": new,
                                  "replace_all": False}):
                try:
                    text = target.read_text()
                except OSError as exc:
                    print(f"edit failed: {exc}", flush=True)
                else:
                    if old not in text:
                        print(f"edit failed: text not found in {spec['path']}", flush=True)
                    else:
                        target.write_text(text.replace(old, new, 1))
                        print(f"edited {spec['path']}", flush=True)
        elif "bash" in step:
            self.bash(str(step["bash"]), str(step.get("description", "")))
        elif "commit" in step:
            message = str(step["commit"])
            self.bash(f"git add -A && git commit -q -m {shlex.quote(message)}", "Commit the work",
                      env=_git_identity(self.cwd))
        elif "ask" in step:
            return self.ask(step)
        elif "mcp" in step:
            self.call_tool(str(step["mcp"]), dict(step.get("args") or {}),
                           str(step["as"]) if step.get("as") else None)
        elif "notify" in step:
            self.hooks.fire("Notification", message=str(step["notify"]),
                            title=str(step.get("title", "Claude Code")),
                            notification_type=str(step.get("type", "permission_prompt")))
        elif "wait" in step:
            if isinstance(step["wait"], dict):
                return self.idle(step["wait"].get("turns") or [])
            if step["wait"]:
                return self.idle()
        elif "loop" in step:
            return self.loop(list(step["loop"]), step.get("until"), int(step.get("max", 1000)))
        elif "exit" in step:
            return self.end(int(step["exit"]))
        else:
            print(f"sim: unknown step {step!r} (skipped)", file=sys.stderr, flush=True)
        return None

    def loop(self, steps: list[dict[str, Any]], until: object, rounds: int) -> int | None:
        """Repeat `steps` up to `rounds` times, until the file `until` names exists."""
        gate = self.path(str(until)) if until else None
        for _ in range(rounds):
            if gate is not None and gate.exists():
                break
            if (code := self.steps(steps)) is not None:
                return code
        return None

    def bash(self, command: str, description: str, env: dict[str, str] | None = None) -> None:
        if not self.tool("Bash", {"command": command, "description": description}):
            return
        print(f"$ {command}", flush=True)
        r = subprocess.run(["bash", "-c", command], cwd=self.cwd, capture_output=True, text=True,
                           env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
        output = (r.stdout + r.stderr).rstrip()
        if output:
            print(output, flush=True)
        if r.returncode:
            print(f"(exit code {r.returncode})", flush=True)

    def call_tool(self, tool: str, args: dict[str, Any], as_job: str | None = None) -> None:
        """A zen MCP tool call, vetted by the PreToolUse hooks first like any tool of Claude's."""
        args = {k: (list(self.spawned) if v == "$spawned" else v) for k, v in self.fill(args).items()}
        self._record("assistant", f"(calls mcp__zen__{tool})")   # the model's message asking for it
        if not self.tool(f"mcp__zen__{tool}", args):
            return
        try:
            client = self.mcp if as_job is None else self.forged.setdefault(
                as_job, McpClient(self.mcp_config, as_job))
            ok, result = client.call(tool, args)
        except (OSError, RuntimeError, ValueError) as exc:
            print(f"mcp {tool} failed: {exc}", flush=True)
            return
        if ok and tool == "agent_spawn" and isinstance(result, dict) and result.get("id"):
            self.spawned.append(str(result["id"]))
        shown = json.dumps(result, ensure_ascii=False) if ok else str(result)
        print(f"mcp {tool} -> {'ok' if ok else 'error'}: {shown[:2000]}", flush=True)
        self._record("user", f"tool {tool}: {shown[:4000]}")

    def fill(self, value: Any) -> Any:
        """'{turn}' in the step's text is the turn number (from 1)."""
        if isinstance(value, str):
            return value.replace("{turn}", str(self.turn))
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        return value

    def ask(self, step: dict[str, Any]) -> int | None:
        self.say(str(step["ask"]))
        answer = self.stop()
        if answer is None:
            answer = self.read_line()
        if answer is None:
            print("stdin closed; ending the session", flush=True)
            self.hooks.fire("SessionEnd", reason="other")
            return 0
        if answer.strip() == "/exit":  # zen finish types the exit command at whatever prompt shows
            self.hooks.fire("SessionEnd", reason="prompt_input_exit")
            return 0
        self.user_turn(answer)
        expect = step.get("expect")
        if expect is not None:
            if str(expect).lower() in answer.lower():
                self.say(f"got the expected answer: {answer}")
            else:
                self.say(f"unexpected answer: {answer}")
                if "otherwise_exit" in step:
                    return self.end(int(step["otherwise_exit"]))
        return None

    def idle(self, turns: list[list[dict[str, Any]]] | None = None) -> int:
        """Rest at the prompt like Claude after a turn: each line (or a Stop hook's block reason)
        is a new turn, /exit ends it. With `turns`, turn N runs the Nth list of steps."""
        pending = self.stop()
        while True:
            line = pending if pending is not None else self.read_line()
            pending = None
            if line is None or line.strip() == "/exit":
                self.hooks.fire("SessionEnd", reason="prompt_input_exit")
                return 0
            if not line.strip():
                continue
            self.turn += 1
            self.user_turn(line)
            if turns:  # each step filled as it comes: "$spawned" grows as the turn runs
                turn = turns[min(self.turn - 2, len(turns) - 1)]
                if (code := self.steps(self.fill(step) for step in turn)) is not None:
                    return code
            else:
                self.say(f"ok: {line}")
            pending = self.stop()


def _git_identity(cwd: Path) -> dict[str, str]:
    """An identity for the agent's commit when git has none (a fresh machine, the demo)."""
    if os.environ.get("GIT_AUTHOR_NAME") and os.environ.get("GIT_COMMITTER_NAME"):
        return {}
    r = subprocess.run(["git", "-C", str(cwd), "config", "user.email"], capture_output=True, text=True)
    if r.returncode == 0 and r.stdout.strip():
        return {}
    return {"GIT_AUTHOR_NAME": "sim agent", "GIT_AUTHOR_EMAIL": "sim@localhost",
            "GIT_COMMITTER_NAME": "sim agent", "GIT_COMMITTER_EMAIL": "sim@localhost"}


def _load_json(path: str | None, what: str) -> Any:
    if not path:
        return None
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise SystemExit(f"sim: {what} {path} is not valid JSON: {exc}") from None


def _prompt_file() -> str:
    """$ZEN_PROMPT_FILE's text: zen passes a long prompt as a file only."""
    try:
        return Path(os.environ["ZEN_PROMPT_FILE"]).read_text()
    except (KeyError, OSError):
        return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="simagent", description="zen's simulated coding agent")
    p.add_argument("--settings", help="Claude Code settings file whose hooks to fire")
    p.add_argument("--script", help="JSON list of steps (default: note the prompt and commit)")
    p.add_argument("--prompt", help="the task prompt (default: $ZEN_PROMPT)")
    p.add_argument("--session-id", help="session id given to hooks (default: from $ZEN_JOB_ID)")
    p.add_argument("--cwd", help="working directory (default: the current one)")
    p.add_argument("--mcp-config", help="MCP servers file (Claude Code's --mcp-config shape)")
    args = p.parse_args(argv)

    cwd = Path(args.cwd or os.getcwd()).resolve()
    prompt = args.prompt if args.prompt is not None else os.environ.get("ZEN_PROMPT") or _prompt_file()
    settings = _load_json(args.settings, "settings file") or {}
    script = _load_json(args.script, "script")
    if script is None:
        script = default_script(prompt)
    if isinstance(script, dict):
        script = script.get("steps") or []
    job = os.environ.get("ZEN_JOB_ID", "")
    session_id = args.session_id or str(uuid.uuid5(uuid.NAMESPACE_URL, f"zen-sim:{job or os.getpid()}"))
    transcript_dir = Path(args.settings).resolve().parent if args.settings else Path(os.environ.get("TMPDIR", "/tmp"))
    agent = SimAgent(settings, script, prompt, cwd, session_id, transcript_dir / f"sim-{session_id}.jsonl",
                     _load_json(args.mcp_config, "MCP config"))

    def on_term(signum: int, frame: Any) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, on_term)
    print("✻ sim agent (zen's simulated Claude Code)", flush=True)
    try:
        return agent.run()
    except Terminated:
        agent.hooks.fire("SessionEnd", reason="other")
        return 143
    except KeyboardInterrupt:
        agent.hooks.fire("SessionEnd", reason="other")
        return 130
    finally:
        for client in (agent.mcp, *agent.forged.values()):
            client.close()


if __name__ == "__main__":
    sys.exit(main())
