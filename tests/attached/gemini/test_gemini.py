"""`zen run gemini -p ...` with the real Gemini CLI against the scripted API: zen's hooks from the
session's own Gemini home, in a plain checkout with no lane."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agents.scripted import say, shell, tool
from tests.attached.conftest import only_job, timeline
from tests.gemini.fakeapi import GeminiAPI
from tests.helpers import ZEN, make_repo

pytestmark = pytest.mark.agents


def test_zen_run_gemini_prompt_mode_is_guarded(gemini_home: Path, api: GeminiAPI, tmp_path: Path,
                                               isolated_env: Path) -> None:
    repo = make_repo(tmp_path / "checkout")
    (isolated_env / "precious.txt").write_text("keep me\n")
    # a folder the user trusts already, as Gemini CLI keeps it
    trusted = isolated_env / ".gemini" / "trustedFolders.json"
    trusted.parent.mkdir(exist_ok=True)
    trusted.write_text(json.dumps({str(repo): "TRUST_FOLDER"}))
    api.script = [shell("rm -rf ~"), tool("write_file", file_path="{cwd}/notes.txt", content="hello\n"),
                  say("All done.")]
    # yolo: Gemini's own prompts off (headless, it offers no shell tool otherwise); zen's hook still judges
    r = subprocess.run([*ZEN, "run", "gemini", "--approval-mode", "yolo", "-p", "tidy up"], cwd=repo,
                       capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    job = only_job(gemini_home)
    evs = timeline(gemini_home, job)
    assert (isolated_env / "precious.txt").read_text() == "keep me\n"
    denied = [e for e in evs if e["type"] == "guard.denied"]
    assert denied and "rm -rf ~" in denied[0]["command"], (r.stderr[-3000:], [(e["type"], e.get("command") or e.get("file_path")) for e in evs])
    assert (repo / "notes.txt").read_text() == "hello\n"
    exited = [e for e in evs if e["type"] == "agent.exited"]
    assert len(exited) == 1 and exited[0]["exit_code"] == r.returncode
    assert [e["paths"] for e in evs if e["type"] == "files.changed"] == [["notes.txt"]]
