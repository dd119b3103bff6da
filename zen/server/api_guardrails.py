"""/api/v1/agent/guardrails, /approvals and /killswitch: the guardian's side of the dashboard."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from zen.core.events import EventType as E
from zen.errors import ZenError
from zen.guard import approvals as gapprovals
from zen.orchestration.job import control, killswitch
from zen.orchestration.read.schedule import breaker_status
from zen.orchestration.safety import autonomy, guardrails
from zen.server.api_tasks import ERRORS
from zen.server.context import home
from zen.server.models import (
    Approval,
    ApprovalList,
    Guardrails,
    GuardrailsUpdate,
    KillSwitch,
    KillSwitchBody,
)
from zen.store import events as ev_store
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

router = APIRouter(prefix="/api/v1/agent", tags=["guardrails"], responses=ERRORS)

RECENT = 50
SELFTEST = "preflight-selftest"


def recent_denied(h: Home, limit: int = RECENT) -> list[dict[str, Any]]:
    """The guardian's latest refusals, in jobs and outside them, newest first."""
    found: list[dict[str, Any]] = []
    store = JobStore(h)
    for job_id in store.ids():
        found += [e for e in store.events(job_id) if e.get("type") == E.GUARD_DENIED]
    selftest = str(h.worktrees / SELFTEST)  # preflight's known-bad probe is zen checking itself
    found += [e for e in ev_store.read_events_any(h.guard_audit_log)
              if e.get("type") == E.GUARD_DENIED and e.get("cwd") != selftest]
    found.sort(key=lambda e: str(e.get("ts", "")), reverse=True)
    keep = ("ts", "job", "tool", "command", "file_path", "rule", "reason", "level", "decision")
    return [{k: e.get(k) for k in keep if e.get(k) is not None} for e in found[:limit]]


def usage(h: Home) -> dict[str, Any]:
    """What is in use against each limit zen enforces."""
    cfg = Config.load(h)
    snaps = JobStore(h).snapshots()
    allowed = sum(s.guard.get("allowed", 0) for s in snaps)
    denied = sum(s.guard.get("denied", 0) for s in snaps)
    return {
        "live_agents": sum(1 for s in snaps if s.state.live),
        "max_concurrent_tasks": int(cfg.get("supervisor", "max_concurrent_tasks")),
        "queued": sum(1 for s in snaps if s.state.value == "queued"),
        "max_queue_size": int(cfg.get("supervisor", "max_queue_size")),
        "guard_allowed": allowed, "guard_denied": denied,
        "breaker": breaker_status(h),
    }


def kill_state(h: Home) -> KillSwitch:
    if not h.kill_file.exists():
        return KillSwitch(engaged=False)
    try:
        rec = gapprovals.load(h.kill_file.read_text())
    except (OSError, ValueError):
        rec = {}
    return KillSwitch(engaged=True, reason=rec.get("reason"), engaged_at=rec.get("engaged_at"), by=rec.get("by"))


@router.get("/guardrails", response_model=Guardrails)
def get_guardrails(h: Home = Depends(home)) -> Guardrails:
    """policy/guardian.yaml (text and what it switches on), usage against the limits, the
    latest blocked operations, the approval queue, the kill switch and each domain's level."""
    return Guardrails(**guardrails.summary(h), kill_switch=h.kill_file.exists(),
                      autonomy=[d.to_json() for d in autonomy.show(h)], usage=usage(h),
                      recent_denied=recent_denied(h), approvals=gapprovals.listing(str(h.root)))


@router.put("/guardrails", response_model=Guardrails)
def put_guardrails(body: GuardrailsUpdate, h: Home = Depends(home)) -> Guardrails:
    """Replace policy/guardian.yaml (`yaml`) or merge `changes` into it (comments kept). It is
    compiled by the guardian first and refused, unwritten, if it does not compile; the built-in
    floor stays whatever the file says. `expected_sha` makes it compare-and-set."""
    guardrails.update(h, text=body.yaml, changes=body.changes, expected_sha=body.expected_sha)
    return get_guardrails(h)


@router.get("/approvals", response_model=ApprovalList)
def list_approvals(h: Home = Depends(home)) -> ApprovalList:
    """Pending, granted (not yet used) and denied approval requests, oldest first."""
    return ApprovalList(approvals=[Approval(**r) for r in gapprovals.listing(str(h.root))])


def _decide(h: Home, aid: str, verdict: str) -> Approval:
    # the same call as `zen approve` / `zen deny`: one rename out of approvals/pending/
    return Approval(**gapprovals.decide_request(str(h.root), aid, verdict, by="human (dashboard)"))


@router.post("/approvals/{approval_id}/approve", response_model=Approval)
def approve(approval_id: str, h: Home = Depends(home)) -> Approval:
    """Allow the same call from the same job once (as `zen approve`)."""
    return _decide(h, approval_id, "granted")


@router.post("/approvals/{approval_id}/deny", response_model=Approval)
def deny(approval_id: str, h: Home = Depends(home)) -> Approval:
    """Refuse the call for good (as `zen deny`)."""
    return _decide(h, approval_id, "denied")


@router.get("/killswitch", response_model=KillSwitch)
def get_killswitch(h: Home = Depends(home)) -> KillSwitch:
    return kill_state(h)


@router.post("/killswitch", response_model=KillSwitch)
def engage(body: KillSwitchBody, h: Home = Depends(home)) -> KillSwitch:
    """Every domain observe-only at once (as `zen kill-switch`); `stop_agents` also stops them."""
    killswitch.engage(h, body.reason)     # and the agents the guardian does not see held
    if body.stop_agents:
        control.stop_all(h, reason="kill switch")
    return kill_state(h)


@router.delete("/killswitch", response_model=KillSwitch)
def release(h: Home = Depends(home)) -> KillSwitch:
    """Release the kill switch (as `zen kill-switch --release`)."""
    if not h.kill_file.exists():
        raise ZenError("the kill switch is not engaged")
    killswitch.release(h)
    return kill_state(h)
