"""`zen run claude` with the real Claude Code against the scripted API on loopback (issue 39's
acceptance): in a plain checkout with no lane, in print mode and interactively in a tmux pane the
test types into; and `zen sessions` beside a Claude session run outside zen."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.attached.conftest import only_job, set_agent_command, timeline
from tests.claude.conftest import run_claude_print, write_claude_json
from tests.claude.fakeapi import FakeAPI, bash, text, tool
from tests.helpers import ZEN, make_repo, wait_until, zen_json

pytestmark = pytest.mark.claude

U = {"input_tokens": 1234, "output_tokens": 56, "cache_creation_input_tokens": 789, "cache_read_input_tokens": 4321}
CLASSES = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _scripted(api: FakeAPI) -> dict[str, int]:
    """The usage the scripted API answered with, each answered script request once."""
    out = dict.fromkeys(CLASSES, 0)
    for req in api.script_requests():
        if req.status == 200 and req.step is not None:
            for k in CLASSES:
                out[k] += api.script[req.step].usage[k]
    return out


def _usage(evs: list[dict[str, Any]]) -> dict[str, int]:
    return {k: int(sum(e.get(k, 0) for e in evs if e["type"] == "usage")) for k in CLASSES}


@pytest.fixture
def checkout(home: Path, claude_env: dict[str, str], needs_claude: Path, tmp_path: Path,
             isolated_env: Path) -> Path:
    """A plain git checkout (no lane), trusted by Claude Code; zen's `claude` is the real one."""
    set_agent_command(home, "claude", str(needs_claude))
    repo = make_repo(tmp_path / "checkout")
    write_claude_json(isolated_env, trusted=[repo])
    (isolated_env / "precious.txt").write_text("keep me\n")
    return repo


def test_zen_run_claude_print_mode_in_a_plain_checkout(checkout: Path, home: Path, api: FakeAPI,
                                                       isolated_env: Path, tmp_path: Path,
                                                       needs_claude: Path) -> None:
    api.script = [bash("rm -rf ~", "clean up the home", usage=U),
                  tool("Write", file_path="{cwd}/notes.txt", content="written by claude\n", usage=U),
                  text("Done.", usage=U)]
    r = subprocess.run([*ZEN, "run", "claude", "-p", "tidy up, then write the notes",
                        "--permission-mode", "acceptEdits", "--output-format", "json"],
                       cwd=checkout, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    result = json.loads(r.stdout)
    assert r.returncode == (1 if result.get("is_error") else 0), r.stderr

    assert (isolated_env / "precious.txt").read_text() == "keep me\n"      # the home intact
    assert (checkout / "notes.txt").read_text() == "written by claude\n"    # the edit made
    job = only_job(home)
    evs = timeline(home, job)
    assert evs[0]["kind"] == "attached" and evs[0]["task"]["lane"] is None
    denied = [e for e in evs if e["type"] == "guard.denied"]
    assert denied and "rm -rf ~" in denied[0]["command"], [e["type"] for e in evs]
    exited = [e for e in evs if e["type"] == "agent.exited"]
    assert len(exited) == 1 and exited[0]["exit_code"] == r.returncode
    assert [e["paths"] for e in evs if e["type"] == "files.changed"] == [["notes.txt"]]
    assert _usage(evs) == _scripted(api)
    # the model was told why
    said = api.tool_result_for(0)
    assert said is not None and "zen guardian" in json.dumps(said)

    # a session outside zen, in another directory
    other = make_repo(tmp_path / "elsewhere")
    write_claude_json(isolated_env, trusted=[checkout, other])
    zen_usage = _scripted(api)
    api.requests.clear()
    u2 = {"input_tokens": 11, "output_tokens": 22, "cache_creation_input_tokens": 33, "cache_read_input_tokens": 44}
    api.script = [text("Hello from outside.", usage=u2)]
    empty = tmp_path / "settings.json"
    empty.write_text("{}\n")
    out = run_claude_print(needs_claude, "say hello", empty, other)
    assert out.returncode == 0, out.stderr
    outside = _scripted(api)

    data = zen_json("sessions", cwd=checkout)
    by_project = {s["project"]: s for s in data["sessions"]}
    mine, theirs = by_project[str(checkout)], by_project[str(other)]
    assert mine["zen"] is True and mine["job"] == job
    assert theirs["zen"] is False and theirs["job"] is None
    assert {k: theirs[k] for k in CLASSES} == outside
    assert {k: mine[k] for k in CLASSES} == zen_usage
    assert mine["turns"] == 1 and theirs["turns"] == 1


def _tmux(sock: str, *args: str) -> str:
    r = subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True, timeout=30)
    return r.stdout


def test_zen_run_claude_interactive_in_a_tmux_pane(checkout: Path, home: Path, api: FakeAPI,
                                                   isolated_env: Path, tmp_path: Path) -> None:
    api.script = [bash("rm -rf ~", "clean up the home", usage=U),
                  tool("Write", file_path="{cwd}/notes.txt", content="typed into claude\n", usage=U),
                  text("Done.", usage=U)]
    sock = os.path.join(os.environ["TMUX_TMPDIR"], "user")
    env = " ".join(f"{k}={v}" for k, v in (("HOME", os.environ["HOME"]), ("ZEN_HOME", str(home))))
    _tmux(sock, "new-session", "-d", "-x", "200", "-y", "50", "-c", str(checkout),
          f"env {env} {' '.join(ZEN)} run claude --permission-mode acceptEdits; echo zen-run-exit=$?; sleep 600")

    def screen() -> str:
        return _tmux(sock, "capture-pane", "-p", "-t", "0")

    def job() -> str | None:
        jobs = [p.name for p in (home / "jobs").iterdir() if p.is_dir() and not p.name.startswith(".")] \
            if (home / "jobs").is_dir() else []
        return jobs[0] if jobs else None

    job_id = wait_until(job, timeout=60, message="the attached job")
    wait_until(lambda: "❯" in screen() or ">" in screen(), timeout=90, message=f"claude's input box\n{screen()}")
    _tmux(sock, "send-keys", "-t", "0", "-l", "tidy up, then write the notes")
    _tmux(sock, "send-keys", "-t", "0", "Enter")

    def waiting() -> bool:
        return any(e["type"] == "turn.waiting" for e in timeline(home, job_id))
    wait_until(waiting, timeout=120, message=f"the turn's end (Stop hook)\n{screen()}")
    assert (checkout / "notes.txt").read_text() == "typed into claude\n"
    assert (isolated_env / "precious.txt").read_text() == "keep me\n"
    _tmux(sock, "send-keys", "-t", "0", "-l", "/exit")
    _tmux(sock, "send-keys", "-t", "0", "Enter")
    wait_until(lambda: "zen-run-exit=" in screen(), timeout=60, message=f"claude's exit\n{screen()}")
    code = int(screen().split("zen-run-exit=")[1].split()[0])

    evs = timeline(home, job_id)
    types = [e["type"] for e in evs]
    assert "turn.working" in types and "guard.denied" in types
    assert any("rm -rf ~" in e.get("command", "") for e in evs if e["type"] == "guard.denied")
    exited = [e for e in evs if e["type"] == "agent.exited"]
    assert len(exited) == 1 and exited[0]["exit_code"] == code == 0
    assert [e["paths"] for e in evs if e["type"] == "files.changed"] == [["notes.txt"]]
    assert _usage(evs) == _scripted(api)
