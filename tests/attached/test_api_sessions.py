"""GET /api/v1/agent/agent-sessions (zen/server/api_agent_sessions.py): what `zen sessions` lists,
for the dashboard."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.attached.conftest import only_job, zen_run
from tests.attached.test_sessions import U2, _claude_lines, _write
from zen.server import api_agent_sessions
from zen.server.context import home as home_dep
from zen.store.home import Home


def test_the_endpoint_lists_the_sessions_zen_sessions_lists(fake_home: Path, git_repo: Path,
                                                           isolated_env: Path) -> None:
    r = zen_run("claude", "-p", "hello", cwd=git_repo, script=[{"tool": "Read", "file_path": str(git_repo / "a.txt")}])
    assert r.returncode == 0, r.stderr
    job = only_job(fake_home)
    _write(isolated_env / ".claude" / "projects" / "-y" / "mine.jsonl",
           _claude_lines("mine", "/y", [("m2", "r2", U2)], days_ago=0))
    app = FastAPI()
    app.include_router(api_agent_sessions.router)
    app.dependency_overrides[home_dep] = lambda: Home(fake_home)
    client = TestClient(app)
    got = client.get("/api/v1/agent/agent-sessions")
    assert got.status_code == 200, got.text
    data = got.json()
    assert {s["project"]: s["job"] for s in data["sessions"]} == {str(git_repo): job, "/y": None}
    mine = next(s for s in data["sessions"] if s["project"] == "/y")
    assert mine["input_tokens"] == 7 and mine["output_tokens"] == 11 and data["total"]["zen"] == 1
    assert [s["project"] for s in client.get("/api/v1/agent/agent-sessions",
                                             params={"project": "/y"}).json()["sessions"]] == ["/y"]
