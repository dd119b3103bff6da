"""`zen run codex exec ...` with the real Codex CLI against the scripted Responses API: its
guardian hook from zen's `-c` overrides, in a plain checkout with no lane."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.agents.scripted import say, shell
from tests.attached.conftest import only_job, timeline
from tests.codex.fakeapi import CodexAPI
from tests.helpers import ZEN, make_repo, zen_json

pytestmark = pytest.mark.agents


def test_zen_run_codex_exec_is_guarded_and_counted(codex_home: Path, api: CodexAPI, tmp_path: Path,
                                                  isolated_env: Path) -> None:
    repo = make_repo(tmp_path / "checkout")
    (isolated_env / "precious.txt").write_text("keep me\n")
    api.script = [shell("rm -rf ~"), shell("echo hello > notes.txt"), say("All done.")]
    # a user's home is not below their TMPDIR (Codex makes no helper binaries under a temporary dir)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = subprocess.run([*ZEN, "run", "codex", "exec", "--json", "tidy up"], cwd=repo, capture_output=True,
                       text=True, timeout=240, stdin=subprocess.DEVNULL, env={**os.environ, "TMPDIR": str(tmp)})
    assert r.returncode == 0, r.stderr + r.stdout[-2000:]
    assert (isolated_env / "precious.txt").read_text() == "keep me\n"
    assert (repo / "notes.txt").read_text() == "hello\n"
    job = only_job(codex_home)
    evs = timeline(codex_home, job)
    denied = [e for e in evs if e["type"] == "guard.denied"]
    assert denied and "rm -rf ~" in denied[0]["command"], [e["type"] for e in evs]
    assert [e["paths"] for e in evs if e["type"] == "files.changed"] == [["notes.txt"]]
    exited = [e for e in evs if e["type"] == "agent.exited"]
    assert len(exited) == 1 and exited[0]["exit_code"] == 0
    usage = [e for e in evs if e["type"] == "usage"]
    assert usage and sum(e.get("api_calls", 0) for e in usage) == 3
    # zen sessions lists its rollout, marked as zen's
    found = [s for s in zen_json("sessions")["sessions"] if s["agent"] == "codex"]
    assert len(found) == 1 and found[0]["job"] == job and found[0]["api_calls"] == 3
