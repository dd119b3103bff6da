"""zen approvals, approve, deny: the calls the guardian held for a human."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import typer

from zen.cli import common, render
from zen.cli.common import JSON
from zen.guard import approvals

AID = typer.Argument(..., metavar="ID", help="The approval request (zen approvals lists them).")


def short(text: object, width: int = 60) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _listed(rows: list[dict[str, Any]]) -> Iterator[render.Out]:
    if not rows:
        yield "no approval requests"
        return
    yield render.Table(["id", "state", "job", "tool", "what", "rule", "created"],
                       [[r.get("id", ""), r["state"], r.get("job") or "-", r.get("tool", ""),
                         short(r.get("command") if r.get("command") is not None else r.get("file_path")),
                         r.get("rule", ""), r.get("created_at", "")] for r in rows])
    if any(r["state"] == "pending" for r in rows):
        yield "zen approve ID allows the call once; zen deny ID refuses it"


def approvals_cmd(json_out: bool = JSON) -> int:
    """Approval requests: pending (waiting for you), granted (not used yet), denied."""
    render.emit(approvals.listing(str(common.home().root)), json_out, _listed)
    return 0


def _decide(aid: str, verdict: str, json_out: bool) -> int:
    rec = approvals.decide_request(str(common.home().root), aid, verdict)

    def text(r: Mapping[str, Any]) -> Iterator[render.Out]:
        if verdict == "granted":
            yield f"approved {r.get('id', aid)}: the same call from the same job is allowed once"
        else:
            yield f"denied {r.get('id', aid)}: the call stays blocked"

    render.emit(rec, json_out, text)
    return 0


def approve(aid: str = AID, json_out: bool = JSON) -> int:
    """Grant a pending approval: the same call from the same job is allowed once."""
    return _decide(aid, "granted", json_out)


def deny(aid: str = AID, json_out: bool = JSON) -> int:
    """Refuse a pending approval: the call stays denied."""
    return _decide(aid, "denied", json_out)


def register(app: typer.Typer) -> None:
    app.command("approvals")(approvals_cmd)
    app.command("approve")(approve)
    app.command("deny")(deny)
