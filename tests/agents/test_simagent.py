"""The simulated agent as a real subprocess in a real git worktree, firing the hooks of the very
settings file the claude adapter writes. The "zen" those hooks call is a small recorder script:
it keeps each payload, and as a guardian it blocks `rm -rf` (exit 2), denies `curl` by JSON and
asks about `sudo`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, make_repo, wait_until
from zen.adapters.git import add_worktree
from zen.agents.settings import settings_text

RECORDER = r'''#!{python}
import json, os, sys, time
args = sys.argv[1:]
data = json.loads(sys.stdin.read() or "{{}}")
log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hooklog")
os.makedirs(log, exist_ok=True)
name = os.path.join(log, "%020d-%d.json" % (time.time_ns(), os.getpid()))
with open(name + ".tmp", "w") as f:  # renamed when complete: the test reads while hooks write
    json.dump({{"argv": args, "payload": data, "env_job": os.environ.get("ZEN_JOB_ID")}}, f)
os.replace(name + ".tmp", name)
if args[:2] == ["guard", "hook"]:
    cmd = (data.get("tool_input") or {{}}).get("command", "")
    path = (data.get("tool_input") or {{}}).get("file_path", "")
    if "rm -rf" in cmd or path.endswith(".env"):
        sys.stderr.write("zen guardian: destructive command\n")
        sys.exit(2)
    if "curl" in cmd:
        print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse",
              "permissionDecision": "deny", "permissionDecisionReason": "no network"}}}}))
    elif "sudo" in cmd:
        print(json.dumps({{"hookSpecificOutput": {{"hookEventName": "PreToolUse",
              "permissionDecision": "ask"}}}}))
'''


class Sim:
    def __init__(self, tmp_path: Path) -> None:
        repo = make_repo(tmp_path / "repo")
        self.wt = tmp_path / "wt"
        add_worktree(repo, self.wt, "zen/job", "main")
        self.job_dir = tmp_path / "job"
        self.job_dir.mkdir()
        self.zen = self.job_dir / "fake zen"  # a space: the settings must quote it
        self.zen.write_text(RECORDER.format(python=sys.executable))
        self.zen.chmod(0o755)
        self.settings = self.job_dir / "claude-settings.json"
        self.settings.write_text(settings_text([str(self.zen)]))
        self.script = self.job_dir / "sim-script.json"

    def start(self, steps: list[dict[str, Any]] | None, prompt: str = "do the task",
              stdin: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
        args = [sys.executable, "-m", "zen.agents.simagent", "--settings", str(self.settings),
                "--session-id", "11111111-2222-3333-4444-555555555555"]
        if steps is not None:
            self.script.write_text(json.dumps(steps))
            args += ["--script", str(self.script)]
        env = {**os.environ, "ZEN_PROMPT": prompt, "ZEN_JOB_ID": "job-1"}
        return subprocess.Popen(args, cwd=self.wt, env=env, stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def run(self, steps: list[dict[str, Any]] | None, stdin: str = "", **kw: Any) -> tuple[int, str]:
        p = self.start(steps, **kw)
        out, err = p.communicate(stdin, timeout=60)
        assert "Traceback" not in err, err
        return p.returncode, out

    def hooks(self) -> list[dict[str, Any]]:
        d = self.job_dir / "hooklog"
        if not d.exists():
            return []
        return [json.loads(f.read_text()) for f in sorted(d.iterdir()) if f.suffix == ".json"]

    def events(self) -> list[str]:
        out = []
        for h in self.hooks():
            p = h["payload"]
            out.append(p["hook_event_name"] + (f":{p['tool_name']}" if "tool_name" in p else ""))
        return out


@pytest.fixture
def sim(tmp_path: Path) -> Sim:
    return Sim(tmp_path)


def test_a_script_edits_commits_and_exits_with_its_code(sim: Sim) -> None:
    code, out = sim.run([
        {"say": "Looking at the code"},
        {"write": {"path": "src/new.py", "content": "A = 1\n"}},
        {"edit": {"path": "README.md", "old": "sample", "new": "example"}},
        {"bash": "echo from-bash && ls src"},
        {"commit": "Add new module"},
        {"exit": 3},
    ])
    assert code == 3
    assert "⏺ Looking at the code" in out and "from-bash" in out and "new.py" in out
    assert (sim.wt / "src" / "new.py").read_text() == "A = 1\n"
    assert (sim.wt / "README.md").read_text() == "# example\n"
    assert git(sim.wt, "log", "-1", "--format=%s") == "Add new module"
    assert git(sim.wt, "status", "--porcelain") == ""  # .zen-tmp is ignored, nothing left behind
    assert sim.events() == ["UserPromptSubmit", "PreToolUse:Write", "PreToolUse:Edit", "PreToolUse:Bash",
                            "PreToolUse:Bash", "Stop", "SessionEnd"]
    hooks = sim.hooks()
    assert hooks[0]["argv"] == ["hook", "UserPromptSubmit"] and hooks[1]["argv"] == ["guard", "hook"]
    assert hooks[-1]["argv"] == ["hook", "SessionEnd"] and hooks[0]["env_job"] == "job-1"  # env inherited
    first, write = hooks[0]["payload"], hooks[1]["payload"]
    assert first["prompt"] == "do the task"
    for h in hooks:
        p = h["payload"]
        assert p["session_id"] == "11111111-2222-3333-4444-555555555555" and p["cwd"] == str(sim.wt.resolve())
        assert p["transcript_path"].endswith(".jsonl")
    assert write["tool_input"] == {"file_path": str(sim.wt.resolve() / "src" / "new.py"), "content": "A = 1\n"}
    assert write["tool_use_id"].startswith("toolu_")
    assert hooks[3]["payload"]["tool_input"]["command"] == "echo from-bash && ls src"
    assert "git commit" in hooks[4]["payload"]["tool_input"]["command"]
    stop = hooks[5]["payload"]
    assert stop["stop_hook_active"] is False and stop["last_assistant_message"] == "Looking at the code"


def test_blocked_tool_calls_do_not_run_and_the_agent_carries_on(sim: Sim) -> None:
    (sim.wt / "build").mkdir()
    code, out = sim.run([
        {"bash": "rm -rf build"},
        {"bash": "curl http://example.invalid > got.txt"},
        {"write": {"path": "prod.env", "content": "SECRET=1\n"}},
        {"say": "after the blocks"},
    ])
    assert code == 0
    assert "blocked: zen guardian: destructive command" in out and "blocked: no network" in out
    assert (sim.wt / "build").is_dir() and not (sim.wt / "got.txt").exists()
    assert not (sim.wt / "prod.env").exists()
    assert "⏺ after the blocks" in out
    assert sim.events()[-2:] == ["Stop", "SessionEnd"]


def test_an_ask_hook_shows_the_permission_dialog_and_a_reply_decides(sim: Sim) -> None:
    # the recorder answers "ask" for any command mentioning sudo
    code, out = sim.run([{"bash": "echo sudo > yes.txt"}, {"bash": "echo sudo > no.txt"}], stdin="1\n2\n")
    assert code == 0
    assert "Do you want to proceed?" in out and "No, and tell Claude what to do differently" in out
    assert (sim.wt / "yes.txt").exists() and not (sim.wt / "no.txt").exists()
    assert "blocked: the user said no" in out
    assert sim.events().count("PermissionRequest:Bash") == 2


def test_ask_waits_for_a_reply_on_stdin(sim: Sim) -> None:
    p = sim.start([{"ask": "Which color?", "expect": "blue"}, {"say": "painting"}])
    wait_until(lambda: "Stop" in sim.events(), message="the Stop hook after the question")
    assert p.poll() is None  # still waiting for the human
    stop = sim.hooks()[-1]["payload"]
    assert stop["last_assistant_message"] == "Which color?"
    out, _ = p.communicate("Blue please\n", timeout=30)
    assert p.returncode == 0
    assert "got the expected answer: Blue please" in out and "⏺ painting" in out
    assert sim.events() == ["UserPromptSubmit", "Stop", "UserPromptSubmit", "Stop", "SessionEnd"]
    assert sim.hooks()[2]["payload"]["prompt"] == "Blue please"


def test_an_unexpected_answer_can_end_the_run_with_a_code(sim: Sim) -> None:
    code, out = sim.run([{"ask": "Proceed?", "expect": "yes", "otherwise_exit": 5}, {"say": "never"}],
                        stdin="no\n")
    assert code == 5 and "unexpected answer: no" in out and "never" not in out


def test_wait_idles_at_the_prompt_until_exit(sim: Sim) -> None:
    p = sim.start([{"say": "ready"}, {"wait": True}])
    wait_until(lambda: sim.events().count("Stop") == 1, message="idle at the prompt")
    p.stdin.write("first\n")
    p.stdin.flush()
    wait_until(lambda: sim.events().count("Stop") == 2, message="the second turn's Stop")
    assert p.poll() is None
    out, _ = p.communicate("second\n/exit\n", timeout=30)
    assert p.returncode == 0 and "ok: first" in out and "ok: second" in out
    assert sim.events().count("UserPromptSubmit") == 3 and sim.events()[-1] == "SessionEnd"
    assert [h["payload"]["reason"] for h in sim.hooks() if h["argv"][-1] == "SessionEnd"] == ["prompt_input_exit"]


def test_a_loop_repeats_its_steps_until_its_file_exists_or_its_rounds_run_out(sim: Sim) -> None:
    code, out = sim.run([{"loop": [{"bash": "echo round >> rounds.txt"}], "max": 3}, {"say": "after"}])
    assert code == 0 and (sim.wt / "rounds.txt").read_text() == "round\n" * 3 and "⏺ after" in out
    assert sim.events().count("PreToolUse:Bash") == 3
    gate = sim.job_dir / "gate"
    p = sim.start([{"loop": [{"bash": "echo tick >> ticks.txt"}, {"sleep": 0.05}], "until": str(gate)},
                   {"exit": 4}])
    wait_until(lambda: (sim.wt / "ticks.txt").exists() and len((sim.wt / "ticks.txt").read_text()) >= 10,
               message="a few rounds")
    assert p.poll() is None  # it goes on until the gate opens
    gate.touch()
    p.communicate(timeout=30)
    assert p.returncode == 4
    ticks = (sim.wt / "ticks.txt").read_text().count("tick")
    assert sim.events().count("PreToolUse:Bash") == 3 + ticks and ticks < 1000  # 3 from the first run


def test_no_script_notes_the_prompt_and_commits(sim: Sim) -> None:
    code, out = sim.run(None, prompt="Write the release notes")
    assert code == 0 and "⏺ Working on: Write the release notes" in out
    assert "Write the release notes" in (sim.wt / "NOTES.md").read_text()
    assert git(sim.wt, "log", "-1", "--format=%s") == "Add notes for: Write the release notes"


def test_sigterm_ends_the_session_with_143(sim: Sim) -> None:
    p = sim.start([{"say": "long job"}, {"sleep": 60}])
    wait_until(lambda: "UserPromptSubmit" in sim.events(), message="the agent to start")
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    assert "Traceback" not in err
    assert p.returncode == 143 and sim.events()[-1] == "SessionEnd"


def test_commit_works_without_a_git_identity(sim: Sim) -> None:
    env_backup = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    try:
        code, _ = sim.run([{"write": {"path": "f.txt", "content": "x\n"}}, {"commit": "agent commit"}])
    finally:
        os.environ.update(env_backup)
    assert code == 0 and git(sim.wt, "log", "-1", "--format=%an|%s") == "sim agent|agent commit"


def test_it_starts_fast_without_heavy_imports(sim: Sim) -> None:
    probe = ("import sys, runpy; sys.argv=['simagent','--script','/nonexistent','--prompt','x'];"
             "import zen.agents.simagent as m;"
             "print(sorted(k for k in ('pydantic','typer','ruamel','rich','git') if k in sys.modules))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert r.stdout.strip() == "[]", r.stderr


def test_the_exit_command_at_a_question_ends_the_session(sim: Sim) -> None:
    code, out = sim.run([{"ask": "Shall I go on?"}, {"say": "went on"}], stdin="/exit\n")
    assert code == 0 and "went on" not in out
    assert sim.events() == ["UserPromptSubmit", "Stop", "SessionEnd"]
