"""The HTTP API against a real `zen serve` and a real supervisor: every endpoint with good and bad
input, one-sentence JSON errors with the right status, nothing written on a refusal, and no
request without the token getting anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.helpers import git, one_line, wait_until
from tests.server.served import Served


def _spool(s: Served) -> list[str]:
    return sorted(p.name for p in (s.home / "spool" / "new").iterdir())


def _state(s: Served) -> tuple[list[str], list[str], str]:
    """What a refused write must leave alone: the spool, the jobs, the policy."""
    return _spool(s), sorted(p.name for p in (s.home / "jobs").iterdir()), \
        (s.home / "policy" / "guardian.yaml").read_text()


def _problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and one_line(body["error"]), body
    return str(body["error"])


def _operations(s: Served) -> list[tuple[str, str]]:
    schema = s.get("/api/v1/openapi.json").json()
    out = []
    for path, item in schema["paths"].items():
        for method in item:
            out.append((method.upper(), re.sub(r"\{[^}]+\}", "x", path)))
    return out


def test_the_schema_lists_every_endpoint_of_design_11(served: Served) -> None:
    paths = served.get("/api/v1/openapi.json").json()["paths"]
    p = "/api/v1/agent"
    want = {
        f"{p}/tasks": {"post", "get"}, f"{p}/tasks/{{task_id}}": {"get", "delete"},
        f"{p}/sessions": {"get"}, f"{p}/sessions/{{job}}": {"get"}, f"{p}/sessions/{{job}}/metrics": {"get"},
        f"{p}/guardrails": {"get", "put"}, f"{p}/locks": {"post", "get"}, f"{p}/locks/{{lease_id}}": {"delete"},
        f"{p}/changes": {"get"}, f"{p}/queue": {"post", "get"}, f"{p}/queue/{{task_id}}": {"delete"},
        f"{p}/sessions/{{job}}/input": {"post"}, f"{p}/sessions/{{job}}/cancel": {"post"},
        f"{p}/sessions/{{job}}/finish": {"post"}, f"{p}/sessions/{{job}}/harvest": {"post"},
        f"{p}/sessions/{{job}}/pause": {"post"}, f"{p}/sessions/{{job}}/resume": {"post"},
        f"{p}/sessions/{{job}}/land": {"post"}, f"{p}/approvals": {"get"},
        f"{p}/approvals/{{approval_id}}/approve": {"post"}, f"{p}/approvals/{{approval_id}}/deny": {"post"},
        f"{p}/killswitch": {"get", "post", "delete"}, f"{p}/events": {"get"},
        f"{p}/agent-sessions": {"get"},      # what zen sessions lists (issue 39)
    }
    for path, methods in want.items():
        assert path in paths, path
        assert methods <= set(paths[path]), (path, set(paths[path]))
    for path, item in paths.items():
        for method, op in item.items():
            if path.endswith(("/events", "/stream")):
                continue
            ok = [c for c in op["responses"] if c.startswith("2")]
            assert ok and "$ref" in json.dumps(op["responses"][ok[0]]), f"{method} {path} has no response model"


def test_no_request_without_the_token_succeeds(served: Served) -> None:
    ops = _operations(served)
    assert len(ops) > 30
    with served.client(auth=False) as c:
        for method, path in [*ops, ("GET", "/agent"), ("GET", "/agent/static/app.js"), ("GET", "/api/v1/openapi.json")]:
            for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": served.token},
                            {"Cookie": f"zen_session={served.token}"}):
                r = c.request(method, path, headers=headers, json={} if method in ("POST", "PUT") else None)
                assert r.status_code == 401, (method, path, headers, r.status_code, r.text[:200])


def test_host_and_origin_are_checked_and_there_is_no_cors(served: Served) -> None:
    before = _state(served)
    with served.client() as c:
        _problem(c.get("/api/v1/agent/status", headers={"Host": "evil.example:80"}), 403)
        r = c.post("/api/v1/agent/tasks", json={"description": "from elsewhere", "lane": "app"},
                   headers={"Origin": "http://evil.example"})
        _problem(r, 403)
        r = c.options("/api/v1/agent/tasks", headers={"Origin": "http://evil.example",
                                                       "Access-Control-Request-Method": "POST"})
        assert r.status_code == 403 and "access-control-allow-origin" not in r.headers
        r = c.get("/api/v1/agent/status", headers={"Origin": f"http://127.0.0.1:{served.port}"})
        assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
        assert r.headers["cache-control"] == "no-store" and "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert _state(served) == before


def test_the_login_url_is_one_time_and_becomes_a_strict_cookie(served: Served) -> None:
    url = served.zen_ok("serve", "--url")
    assert url.startswith(f"http://127.0.0.1:{served.port}/agent?token=")
    assert served.token not in url  # a ticket, not the token
    with httpx.Client(timeout=10) as c:
        r = c.get(url, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/agent"
        cookie = r.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert served.token not in cookie
        with httpx.Client(timeout=10) as stranger:  # a browser without the session (this one has it now)
            again = stranger.get(url, follow_redirects=False)
        assert again.status_code == 401 and "already used" in again.text
        jar = {"Cookie": cookie.split(";")[0]}
        page = c.get(f"{served.base}/agent", headers=jar)
        assert page.status_code == 200 and "<title>zen</title>" in page.text
        assert c.get(f"{served.base}/api/v1/agent/status", headers=jar).status_code == 200
        before = _state(served)
        # a cookie rides along with any request a browser makes: a write must come from the page
        r = c.post(f"{served.base}/api/v1/agent/tasks", headers=jar, json={"description": "x", "lane": "app"})
        _problem(r, 403)
        r = c.post(f"{served.base}/api/v1/agent/tasks", json={"description": "x", "lane": "app"},
                   headers={**jar, "Origin": "http://evil.example"})
        _problem(r, 403)
        assert _state(served) == before
        r = c.put(f"{served.base}/api/v1/agent/guardrails", json={"changes": {}},
                  headers={**jar, "Origin": f"http://127.0.0.1:{served.port}"})
        assert r.status_code == 200, r.text
        with httpx.Client(timeout=10) as stranger:
            forged = stranger.get(f"{served.base}/agent?token=abc.{2**40}.deadbeef", follow_redirects=False)
        assert forged.status_code == 401
    mode = (served.home / "control" / "api-token").stat().st_mode & 0o777
    assert mode == 0o600


def test_the_token_never_reaches_an_agent(served: Served) -> None:
    job = served.dispatch_sim("env-probe", [{"say": "up"}, {"wait": True}])
    served.wait_state(job, "waiting")
    pane = next(e["pid"] for e in served.events(job) if e["type"] == "agent.spawned")
    kids = Path(f"/proc/{pane}/task/{pane}/children").read_text().split()
    for pid in [pane, *map(int, kids)]:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert served.token.encode() not in environ
        assert b"api-token" not in environ
    served.zen_ok("cancel", job)


def test_tasks_go_through_dispatch_into_the_spool(served: Served) -> None:
    with served.client() as c:
        r = c.post("/api/v1/agent/tasks", json={"name": "from-api", "description": "Write the notes", "lane": "app",
                                                "agent": "cmd", "command": ["sh", "-c", 'echo "$ZEN_MODEL $ZEN_MAX_TOKENS" > model.txt'],
                                                "priority": 2, "config": {"model": "small-model", "max_tokens": 77}})
        assert r.status_code == 201, r.text
        task = r.json()
        assert task["prompt"] == "Write the notes" and task["name"] == "from-api" and task["state"] == "pending"
        assert task["model"] == "small-model" and task["max_tokens"] == 77
        job = task["id"]
        s = served.wait_state(job, "harvested")
        assert git(served.repo, "show", f"zen/review/{job}:model.txt") == "small-model 77"
        text = (served.home / "jobs" / job / "task.yaml").read_text()
        assert "model: small-model" in text and "prompt: Write the notes" in text
        assert s["review_branch"] == f"zen/review/{job}"
        listed = c.get("/api/v1/agent/tasks").json()["tasks"]
        assert any(t["id"] == job and t["state"] == "harvested" for t in listed)
        assert all(t["state"] == "harvested" for t in c.get("/api/v1/agent/tasks?state=harvested").json()["tasks"])
        d = c.get(f"/api/v1/agent/tasks/{job}").json()
        assert d["task"]["id"] == job and "zen/review/" in (d["review"] or "") and d["session"]["state"] == "harvested"
        assert c.get("/api/v1/agent/tasks/from-api").json()["task"]["id"] == job  # the name works like in the CLI
        _problem(c.get("/api/v1/agent/tasks/no-such-task"), 404)
        _problem(c.delete(f"/api/v1/agent/tasks/{job}"), 409)  # already harvested


@pytest.mark.parametrize("body, status, words", [
    ({"description": "x", "lane": "app", "priority": 9}, 422, "priority"),
    ({"description": "x", "lane": "app", "colour": "blue"}, 422, "colour"),
    ({"description": "x", "lane": "nope"}, 422, "lane"),
    ({"description": "   ", "lane": "app"}, 422, "prompt"),
    ({"lane": "app"}, 422, "prompt"),
    ({"description": "x", "lane": "app", "depends_on": ["no-such-job"]}, 422, "no-such-job"),
    ({"description": "x", "lane": "app", "timeout": "soon"}, 422, "timeout"),
    ({"description": "x", "lane": "app", "agent": "robot"}, 422, "agent"),
    ({"description": "x", "lane": "app", "config": {"temperature": 2}}, 422, "temperature"),
    ({"description": "x", "lane": "app", "name": "Bad Name!"}, 422, "name"),
    ({"description": "x", "lane": "app", "agent": "cmd"}, 422, "command"),
])
def test_a_bad_task_is_refused_with_one_sentence_and_writes_nothing(served: Served, body: dict[str, Any],
                                                                      status: int, words: str) -> None:
    before = _state(served)
    for path in ("/api/v1/agent/tasks", "/api/v1/agent/queue"):
        err = _problem(served.call("POST", path, json=body), status)
        assert words in err, err
    assert _state(served) == before


def test_malformed_bodies_are_400_or_422(served: Served) -> None:
    before = _state(served)
    with served.client() as c:
        _problem(c.post("/api/v1/agent/tasks", content=b"{not json", headers={"Content-Type": "application/json"}), 400)
        _problem(c.post("/api/v1/agent/tasks", json=[1, 2]), 422)
        _problem(c.put("/api/v1/agent/guardrails", json={"yaml": "a: b", "changes": {}}), 422)
        _problem(c.get("/api/v1/agent/nowhere"), 404)
        _problem(c.patch("/api/v1/agent/tasks"), 405)
    assert _state(served) == before


def test_the_queue_lists_and_drops_what_has_not_started(served: Served) -> None:
    cfg = served.home / "zen.yaml"
    text = cfg.read_text()
    cfg.write_text(text.replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 0"))
    try:
        with served.client() as c:
            t = c.post("/api/v1/agent/queue", json={"description": "waits", "lane": "app", "name": "waiter"}).json()
            # listed before and after the supervisor takes it in (between the two it is being claimed)
            wait_until(lambda: any(x["id"] == t["id"] for x in c.get("/api/v1/agent/queue").json()["tasks"]))
            wait_until(lambda: served.snap(t["id"])["state"] == "queued", message="the supervisor to take it in")
            assert any(x["id"] == t["id"] and x["state"] == "queued" for x in c.get("/api/v1/agent/queue").json()["tasks"])
            r = c.delete(f"/api/v1/agent/queue/{t['id']}")
            assert r.status_code == 200 and r.json()["state"] == "cancelled", r.text
            assert not any(x["id"] == t["id"] for x in c.get("/api/v1/agent/queue").json()["tasks"])
            _problem(c.delete(f"/api/v1/agent/queue/{t['id']}"), 409)
            _problem(c.delete("/api/v1/agent/queue/never-was"), 404)
    finally:
        cfg.write_text(text)


def test_sessions_metrics_and_every_control(served: Served) -> None:
    job = served.dispatch_sim("controlled", [{"write": {"path": "a.txt", "content": "a\n"}}, {"ask": "Which colour?"},
                                             {"wait": True}])
    served.wait_state(job, "waiting")
    with served.client() as c:
        listed = c.get("/api/v1/agent/sessions").json()
        assert any(s["job"] == job for s in listed["sessions"]) and listed["supervisor"]["running"]
        assert all(s["state"] in ("starting", "working", "waiting", "paused")
                   for s in c.get("/api/v1/agent/sessions?live=true").json()["sessions"])
        d = c.get(f"/api/v1/agent/sessions/{job}?events=3").json()
        assert d["session"]["job"] == job and len(d["events"]) == 3 and d["task"]["agent"] == "sim"
        m = c.get(f"/api/v1/agent/sessions/{job}/metrics").json()
        evs = served.events(job)
        assert m["job"] == job and m["guard_allowed"] >= 1 and m["file_writes"] >= 1
        assert m["input_tokens"] == sum(e.get("input_tokens") or 0 for e in evs if e["type"] == "usage")
        assert m["guard_allowed"] == sum(1 for e in evs if e["type"] == "guard.allowed")
        fleet = c.get("/api/v1/agent/metrics").json()
        assert fleet["active_sessions"] >= 1 and fleet["total"]["input_tokens"] >= m["input_tokens"]
        _problem(c.get("/api/v1/agent/sessions/nope"), 404)
        _problem(c.get("/api/v1/agent/sessions/nope/metrics"), 404)
        scr = c.get(f"/api/v1/agent/sessions/{job}/screen").json()
        assert "Which colour?" in scr["text"] and scr["live"] and scr["width"] > 0

        r = c.post(f"/api/v1/agent/sessions/{job}/input", json={"text": "blue"})
        assert r.status_code == 200, r.text
        sent = [e for e in served.events(job) if e["type"] == "input.sent"]
        assert sent[-1]["text"] == "blue" and sent[-1]["actor"] == "human"
        _problem(c.post(f"/api/v1/agent/sessions/{job}/input", json={"text": ""}), 422)
        _problem(c.post(f"/api/v1/agent/sessions/{job}/keys", json={"items": [{"key": "rm -rf"}]}), 422)
        _problem(c.post(f"/api/v1/agent/sessions/{job}/keys", json={"items": [{"key": "Warp"}]}), 422)
        _problem(c.post(f"/api/v1/agent/sessions/{job}/keys", json={"items": [{"text": "a", "key": "Enter"}]}), 422)
        served.wait_state(job, "waiting")
        r = c.post(f"/api/v1/agent/sessions/{job}/keys", json={"items": [{"text": "hi there"}, {"key": "Enter"}]})
        assert r.status_code == 200, r.text
        typed = [e for e in served.events(job) if e["type"] == "input.sent"][-1]
        assert typed["text"] == "hi there\n" and typed["via"] == "grid" and typed["keys"] == ["Enter"]
        wait_until(lambda: "ok: hi there" in c.get(f"/api/v1/agent/sessions/{job}/screen").json()["text"],
                   message="the typed line to reach the agent")

        assert c.post(f"/api/v1/agent/sessions/{job}/pause").json()["state"] == "paused"
        _problem(c.post(f"/api/v1/agent/sessions/{job}/pause"), 409)
        assert c.post(f"/api/v1/agent/sessions/{job}/resume").json()["state"] in ("waiting", "working")
        _problem(c.post(f"/api/v1/agent/sessions/{job}/resume"), 409)
        h = c.post(f"/api/v1/agent/sessions/{job}/harvest").json()
        assert h["branch"] == f"zen/review/{job}" and h["files"] >= 1
        _problem(c.post(f"/api/v1/agent/sessions/{job}/land"), 409)  # still live
        r = c.post(f"/api/v1/agent/sessions/{job}/finish")
        assert r.status_code == 200, r.text
        served.wait_state(job, "harvested")
        _problem(c.post(f"/api/v1/agent/sessions/{job}/finish"), 409)
        _problem(c.post(f"/api/v1/agent/sessions/{job}/cancel"), 409)
        _problem(c.post(f"/api/v1/agent/sessions/{job}/input", json={"text": "late"}), 409)
        err = _problem(c.post(f"/api/v1/agent/sessions/{job}/land"), 409)  # main is checked out in the lane
        assert "checked out" in err


def test_land_over_the_api_merges_a_clean_job(served: Served) -> None:
    job = served.dispatch_sim("lander", [{"write": {"path": "landed.txt", "content": "landed\n"}}, {"exit": 0}])
    served.wait_state(job, "harvested")
    git(served.repo, "checkout", "-q", "-b", f"side-{job[-4:]}")
    try:
        before = git(served.repo, "rev-parse", "main")
        r = served.call("POST", f"/api/v1/agent/sessions/{job}/land")
        assert r.status_code == 200, r.text
        assert r.json()["base_was"] == before and git(served.repo, "show", "main:landed.txt") == "landed"
        assert [e["actor"] for e in served.events(job) if e["type"] == "job.landed"] == ["human"]
    finally:
        git(served.repo, "checkout", "-q", "main")


def test_guardrails_put_validates_keeps_comments_and_never_weakens_the_floor(served: Served) -> None:
    policy = served.home / "policy" / "guardian.yaml"
    original = policy.read_text()
    comment = next(line for line in original.splitlines() if line.startswith("#"))
    with served.client() as c:
        g = c.get("/api/v1/agent/guardrails").json()
        assert g["valid"] and g["yaml"] == original and g["require_approval"]["file_deletes"] is False
        assert {"live_agents", "max_concurrent_tasks", "guard_denied"} <= set(g["usage"])
        r = c.put("/api/v1/agent/guardrails", json={"changes": {"require_approval": {"network_requests": True}},
                                                    "expected_sha": g["sha"]})
        assert r.status_code == 200, r.text
        assert r.json()["require_approval"]["network_requests"] is True
        text = policy.read_text()
        assert comment in text and text != original
        stale = c.put("/api/v1/agent/guardrails", json={"changes": {}, "expected_sha": g["sha"]})
        _problem(stale, 409)
        now = policy.read_text()
        for bad, words in (
            ({"yaml": "rules: [{id: open, reason: let it all through, decision: allow, match: {command: [rm]}}]"},
             "decision"),
            ({"yaml": "builtin_floor: off\n"}, "builtin_floor"),
            ({"yaml": "rules: [\n"}, "YAML"),
            ({"changes": {"require_approval": {"file_deletes": "sometimes"}}}, "file_deletes"),
        ):
            err = _problem(c.put("/api/v1/agent/guardrails", json=bad), 422)
            assert words in err and "candidate" not in err, err
            assert policy.read_text() == now  # nothing written on a refusal
        r = c.put("/api/v1/agent/guardrails", json={"yaml": original})
        assert r.status_code == 200 and policy.read_text() == original
    # the built-in floor holds whatever the file says
    r = served.zen("guard", "check", "--", "rm -rf ~")
    assert r.returncode == 4, r.stdout + r.stderr


def test_approvals_and_the_kill_switch(served: Served) -> None:
    with served.client() as c:
        assert isinstance(c.get("/api/v1/agent/approvals").json()["approvals"], list)
        _problem(c.post("/api/v1/agent/approvals/0123456789ab/approve"), 404)
        _problem(c.post("/api/v1/agent/approvals/not-an-id!/deny"), 422)
        assert c.get("/api/v1/agent/killswitch").json() == {"engaged": False, "reason": None, "engaged_at": None,
                                                            "by": None}
        r = c.post("/api/v1/agent/killswitch", json={"reason": "testing the switch"})
        assert r.status_code == 200 and r.json()["engaged"] and r.json()["reason"] == "testing the switch"
        assert (served.home / "control" / "KILL").exists()
        assert served.zen("guard", "check", "--", "touch x").returncode == 4  # observe-only now
        _problem(c.post("/api/v1/agent/killswitch", json={"reason": 5}), 422)
        assert c.delete("/api/v1/agent/killswitch").json()["engaged"] is False
        assert not (served.home / "control" / "KILL").exists()
        _problem(c.delete("/api/v1/agent/killswitch"), 409)


def test_the_file_browser_and_a_humans_save(served: Served) -> None:
    job = served.dispatch_sim("browsed", [{"write": {"path": "src/new.py", "content": "x = 1\n"}}, {"wait": True}])
    served.wait_state(job, "waiting")
    with served.client() as c:
        files = {f["path"]: f["status"] for f in c.get(f"/api/v1/agent/sessions/{job}/files").json()["files"]}
        assert files["src/new.py"] == "A" and files["README.md"] == "" and not any(p.startswith(".zen") for p in files)
        d = c.get(f"/api/v1/agent/sessions/{job}/diff").json()
        assert "+x = 1" in d["diff"] and "src/new.py" in d["stat"]
        f = c.get(f"/api/v1/agent/sessions/{job}/file", params={"path": "src/new.py"}).json()
        assert f["content"] == "x = 1\n"
        r = c.put(f"/api/v1/agent/sessions/{job}/file", json={"path": "src/new.py", "content": "x = 2\n",
                                                               "expected_sha": f["sha"]})
        assert r.status_code == 200, r.text
        wt = served.home / "worktrees" / job
        assert (wt / "src" / "new.py").read_text() == "x = 2\n"
        edited = [e for e in served.events(job) if e["type"] == "files.edited"]
        assert edited[-1]["actor"] == "human" and edited[-1]["paths"] == ["src/new.py"]
        _problem(c.put(f"/api/v1/agent/sessions/{job}/file", json={"path": "src/new.py", "content": "x = 3\n",
                                                                    "expected_sha": f["sha"]}), 409)
        for bad in ("../escape.txt", "/etc/passwd", ".git/config", ".zen/x", "src/../../x"):
            _problem(c.put(f"/api/v1/agent/sessions/{job}/file", json={"path": bad, "content": "no"}), 422)
            _problem(c.get(f"/api/v1/agent/sessions/{job}/file", params={"path": bad}), 422)
        assert (wt / "src" / "new.py").read_text() == "x = 2\n"
        _problem(c.get(f"/api/v1/agent/sessions/{job}/file", params={"path": "missing.txt"}), 404)
    served.zen_ok("cancel", job)


def test_locks_and_changes(served: Served) -> None:
    job = served.dispatch_sim("locker", [{"say": "holding"}, {"wait": True}])
    served.wait_state(job, "waiting")
    with served.client() as c:
        r = c.post("/api/v1/agent/locks", json={"job": job, "path": "src/app.py", "reason": "refactoring"})
        assert r.status_code == 201, r.text
        lease = r.json()
        assert lease["job"] == job and lease["path"] == "src/app.py" and lease["mode"] == "exclusive"
        assert any(x["id"] == lease["id"] for x in c.get("/api/v1/agent/locks").json()["locks"])
        _problem(c.post("/api/v1/agent/locks", json={"job": job, "path": "x", "ttl": "later"}), 422)
        _problem(c.post("/api/v1/agent/locks", json={"job": "nope", "path": "x"}), 404)
        changes = c.get("/api/v1/agent/changes", params={"job": job}).json()["changes"]
        assert any(ch["type"] == "lock.acquired" for ch in changes)
        first = changes[0]["id"]
        later = c.get("/api/v1/agent/changes", params={"since": first}).json()["changes"]
        assert first not in [ch["id"] for ch in later]
        assert c.delete(f"/api/v1/agent/locks/{lease['id']}").status_code == 200
        _problem(c.delete(f"/api/v1/agent/locks/{lease['id']}"), 404)
        _problem(c.get("/api/v1/agent/changes", params={"since": "whenever"}), 422)
    served.zen_ok("cancel", job)


def test_status_and_lanes(served: Served) -> None:
    with served.client() as c:
        st = c.get("/api/v1/agent/status").json()
        assert st["home"] == str(served.home) and st["supervisor"]["running"]
        lanes = c.get("/api/v1/agent/lanes").json()["lanes"]
        assert [lane["name"] for lane in lanes] == ["app"] and lanes[0]["path"] == str(served.repo)
