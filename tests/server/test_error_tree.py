"""The API's status codes come from zen's error tree (issue 34): each class of zen/errors.py carries
its HTTP status, and the server answers it, whatever the sentence says."""

from __future__ import annotations

import inspect

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.helpers import one_line
from tests.server.served import Served
from zen import errors
from zen.guard import approvals
from zen.guard.api import APPROVAL, Context, Decision, ToolCall
from zen.server import errors as server_errors


def _problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert set(body) == {"error"} and one_line(body["error"]), body
    return str(body["error"])


def test_the_real_endpoints_answer_the_status_of_the_error_they_meet(served: Served) -> None:
    job = served.dispatch_sim("tree", [{"say": "holding"}, {"wait": True}])
    served.wait_state(job, "waiting")
    with served.client() as c:
        # a lease on a path outside the job's worktree is bad input, not a conflict
        err = _problem(c.post("/api/v1/agent/locks", json={"job": job, "path": "/etc/passwd"}), 422)
        assert "outside the job's worktree" in err
        _problem(c.delete("/api/v1/agent/locks/0123456789abcdef"), 404)
        lease = c.post("/api/v1/agent/locks", json={"job": job, "path": "src/tree.py"})
        assert lease.status_code == 201, lease.text
        other = served.dispatch_sim("other", [{"wait": True}])
        served.wait_state(other, "waiting")
        held = _problem(c.post("/api/v1/agent/locks", json={"job": other, "path": "src/tree.py"}), 409)
        assert job in held

        # an approval the guardian asked for: decided once, then it is no longer pending
        ctx = Context(cwd=str(served.home), worktree=None, home=str(served.home), user_home=None, job_id=job)
        call = ToolCall("Bash", command="curl -X POST https://api.example.com/deploy")
        approvals.resolve(ctx, call, Decision(APPROVAL, "net.approval", "a network request"), act=True)
        [pending] = [a for a in c.get("/api/v1/agent/approvals").json()["approvals"] if a["job"] == job]
        assert c.post(f"/api/v1/agent/approvals/{pending['id']}/approve").status_code == 200
        again = _problem(c.post(f"/api/v1/agent/approvals/{pending['id']}/deny"), 409)
        assert "already granted" in again
        _problem(c.post("/api/v1/agent/approvals/0123456789ab/approve"), 404)
        _problem(c.post("/api/v1/agent/approvals/not-an-id!/deny"), 422)
    served.zen_ok("cancel", job)
    served.zen_ok("cancel", other)


def _instance(cls: type[errors.ZenError]) -> errors.ZenError:
    if cls is errors.RevisionMismatch:
        return errors.RevisionMismatch("j1", 3, 5)
    if cls is errors.LeaseConflict:
        return errors.LeaseConflict("src/a.py is held by job j2", {"job": "j2", "id": "abc"})
    return cls(f"one sentence about {cls.__name__}")


def test_every_class_of_the_tree_is_answered_with_its_own_status_and_sentence() -> None:
    tree = [c for c in vars(errors).values()
            if inspect.isclass(c) and issubclass(c, errors.ZenError) and c.__module__ == errors.__name__]
    app = FastAPI()
    server_errors.install(app)

    @app.get("/raise/{name}")
    def boom(name: str) -> None:
        raise _instance(getattr(errors, name))

    @app.get("/bug")
    def bug() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as c:
        for cls in tree:
            r = c.get(f"/raise/{cls.__name__}")
            assert (r.status_code, r.json()) == (cls.http_status, {"error": str(_instance(cls))}), cls
        assert c.get("/bug").status_code == 500
    statuses = {c.__name__: c.http_status for c in tree}
    assert statuses["KillSwitchEngaged"] == 423 and statuses["ApprovalNotFound"] == 404
    assert statuses["LeaseError"] == 422 and statuses["JobBusy"] == 409
