"""A stand-in for the `claude` command in the fast attached tests: it does what Claude Code does
with the `--settings` file zen run gives it, and no more.

It reads the hooks in `--settings FILE`, then follows the script in $FAKE_CLAUDE_SCRIPT (a JSON
list of tool calls, e.g. {"tool": "Bash", "command": "rm -rf ~"} or {"tool": "Write",
"file_path": "a.txt", "content": "x"}): UserPromptSubmit first; for each call the PreToolUse hooks
whose matcher matches, with Claude Code's payload on stdin; a hook exiting 2 blocks the call (its
stderr is what the model would be told), else the call runs. Each answer is written to the session
transcript as Claude Code writes it (~/.claude/projects/<cwd slug>/<session>.jsonl, each response
on two lines repeating its ids and usage), then the Stop hook runs with the transcript's path. It
prints one JSON line per call (tool, allowed, reason) and what it was given (argv), and exits with
$FAKE_CLAUDE_EXIT (0 by default); with $FAKE_CLAUDE_ON_INT, a Ctrl-C ends it with that code.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

USAGE = {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 300,
         "cache_read_input_tokens": 1000}


def hooks(settings: dict, event: str, tool: str | None = None) -> list[str]:
    out = []
    for group in settings.get("hooks", {}).get(event, []):
        matcher = group.get("matcher")
        if tool is not None and matcher and not re.fullmatch(matcher, tool):
            continue
        out += [h["command"] for h in group.get("hooks", [])]
    return out


def run_hook(command: str, payload: dict) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=30)


def main(argv: list[str]) -> int:
    if os.environ.get("FAKE_CLAUDE_ON_INT"):   # Ctrl-C ends it with this exit code, as a TUI decides
        signal.signal(signal.SIGINT, lambda *_: os._exit(int(os.environ["FAKE_CLAUDE_ON_INT"])))
    settings_path = argv[argv.index("--settings") + 1]
    settings = json.loads(Path(settings_path).read_text())
    cwd = os.getcwd()
    session = str(uuid.uuid4())
    project = Path(os.environ["HOME"]) / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)
    project.mkdir(parents=True, exist_ok=True)
    transcript = project / f"{session}.jsonl"
    base = {"session_id": session, "transcript_path": str(transcript), "cwd": cwd}
    print(json.dumps({"argv": argv}), flush=True)
    with transcript.open("a") as t:
        t.write(json.dumps({"type": "user", "cwd": cwd, "sessionId": session, "timestamp": "2026-12-01T10:00:00.000Z",
                            "message": {"role": "user", "content": "do the scripted work"}}) + "\n")
    for cmd in hooks(settings, "UserPromptSubmit"):
        run_hook(cmd, {**base, "hook_event_name": "UserPromptSubmit", "prompt": "do the scripted work"})
    script = json.loads(os.environ.get("FAKE_CLAUDE_SCRIPT") or "[]")
    for n, call in enumerate(script):
        tool = call.pop("tool")
        payload = {**base, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": call,
                   "tool_use_id": f"toolu_{n}"}
        verdicts = [run_hook(cmd, payload) for cmd in hooks(settings, "PreToolUse", tool)]
        blocked = next((v for v in verdicts if v.returncode == 2), None)
        allowed = blocked is None and bool(verdicts)
        if allowed:
            if tool == "Bash":
                subprocess.run(["sh", "-c", call["command"]], cwd=cwd, timeout=30)
            elif tool == "Write":
                Path(cwd, call["file_path"]).write_text(call["content"])
        print(json.dumps({"tool": tool, "allowed": allowed,
                          "reason": blocked.stderr.strip() if blocked else ""}), flush=True)
        line = {"type": "assistant", "cwd": cwd, "sessionId": session, "requestId": f"req_{n}",
                "timestamp": f"2026-12-01T10:00:{n + 1:02d}.000Z",
                "message": {"id": f"msg_{session[:8]}_{n}", "model": "claude-sonnet-4-5", "role": "assistant",
                            "usage": USAGE, "content": [{"type": "tool_use", "name": tool}]}}
        with transcript.open("a") as t:   # one line per content block, the ids and usage repeated
            t.write(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    for cmd in hooks(settings, "Stop"):
        run_hook(cmd, {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                       "last_assistant_message": ""})
    return int(os.environ.get("FAKE_CLAUDE_EXIT") or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
