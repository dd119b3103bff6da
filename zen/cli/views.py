"""The text forms of `zen status` and `zen show`, over the plain data of
zen.orchestration.read.overview. No typer here: the CLI's fast entry (zen.cli.fast) prints through
these as the typer commands do, so both print exactly the same."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime

from zen.agents import shown
from zen.cli import render
from zen.cli.render import headline, ms
from zen.core.durations import format_duration
from zen.observe.metrics import headline as metrics_headline

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SKIP = {"v", "seq", "ts", "job", "type", "actor", "task"}


def age(ts: str | None) -> str:
    if not ts:
        return "-"
    try:
        then = datetime.fromisoformat(ts.replace("Z", "+00:00"))
        return format_duration((datetime.now(UTC) - then).total_seconds())
    except (ValueError, TypeError):
        return "-"


def _cost(usage: Mapping[str, float]) -> str:
    got = metrics_headline(usage or {})
    return f"${got['cost_usd']:.4f}" if got["api_calls"] or got["cost_usd"] else "-"


def status_lines(s: Mapping[str, Any]) -> Iterator[render.Out]:
    sup = s["supervisor"]
    for line in sup.get("banner", []):
        yield render.Note(line)
    yield str(sup["summary"])
    b = s["breaker"]
    state = "OPEN: automatic work is held" if b["open"] else "closed"
    yield (f"circuit breaker: {state} ({b['automatic_in_window']} automatic starts in the last "
           f"{format_duration(b['window_s'])}, limit {b['limit']})")
    u = s["usage"]
    if u["api_calls"] or u["tokens"]:
        yield f"usage: {headline(u)} (all jobs; zen metrics for more)"
    rows: list[list[object]] = [[t["id"], t["name"], "pending", shown(t["agent"]), t["lane"] or "",
                                 age(t["created_at"]), ""] for t in s["pending"]]
    rows += [[j["job"], j.get("name") or "", j["state"] + (f" ({j['reason']})" if j.get("reason") else "")
              + (f", checks {j['checks']}" if j.get("checks") else ""),
              shown(j.get("agent") or ""), j.get("lane") or "", age(j.get("created_at")), _cost(j.get("usage") or {})]
             for j in s["jobs"]]
    head = ["id", "name", "state", "agent", "lane", "age", "cost"]
    if any((j.get("executor") or "local") != "local" for j in s["jobs"]):  # some job runs elsewhere: say where
        where = [""] * len(s["pending"]) + [_where(j) for j in s["jobs"]]
        rows = [[*r[:5], w, *r[5:]] for r, w in zip(rows, where, strict=True)]
        head = [*head[:5], "runs on", *head[5:]]
    rows = as_tree(rows, s.get("tree") or [])     # agent teams: each worker under its parent
    if rows:
        yield render.Table(head, rows)
    else:
        yield "no tasks or jobs yet (zen dispatch \"PROMPT\")"
    yield from quarantine_lines(s.get("quarantined") or [])


def branches(nodes: Sequence[Mapping[str, Any]], prefix: str = "", root: bool = True) -> Iterator[tuple[str, str]]:
    """(id, the branch drawn before it) depth first: a worker under the job that spawned it, as
    `tree` draws it."""
    for i, n in enumerate(nodes):
        last = i == len(nodes) - 1
        yield str(n["id"]), prefix + ("" if root else ("└─ " if last else "├─ "))
        yield from branches(n.get("children") or [], prefix + ("" if root else ("   " if last else "│  ")), False)


def as_tree(rows: list[list[object]], tree: Sequence[Mapping[str, Any]]) -> list[list[object]]:
    """The status rows (id first) in the team tree's order, each worker's id drawn under its
    parent's; with no workers anywhere, the rows as they were."""
    by_id = {str(r[0]): r for r in rows}
    out: list[list[object]] = []
    for job, drawn in branches(tree):
        row = by_id.pop(job, None)
        if row is not None:
            out.append([drawn + job, *row[1:]])
    return out + list(by_id.values())       # a row the tree does not hold (from a newer zen): last


def quarantine_lines(entries: list[dict[str, str]]) -> Iterator[str]:
    """What `zen status` and `zen queue` say about rejected spool entries (one line each)."""
    if entries:
        n = len(entries)
        yield (f"quarantined: {n} spool entr{'y' if n == 1 else 'ies'} rejected, in spool/quarantine/ "
               "(each with a .reason file; delete them when read)")
        for e in entries[-10:]:
            yield render.clean(f"  {e['file']}: {e['reason']}")


def _where(j: dict[str, Any]) -> str:
    """Where a job's agent runs: local, or the Ray node (else the cluster) of its current turn."""
    executor = str(j.get("executor") or "local")
    if executor == "local":
        return "local"
    return f"{executor} {j.get('remote_host') or j.get('remote_address') or ''}".strip()


def format_event(ev: Mapping[str, Any]) -> str:
    extras = " ".join(f"{k}={v}" for k, v in ev.items() if k not in _SKIP)
    ts = str(ev.get("ts", ""))[11:23]
    line = f"{ev.get('seq', '?'):>4} {ts} {ev.get('type', '?'):<18} {ev.get('actor', ''):<10} {extras}".rstrip()
    return render.clean(line)


def show_lines(d: Mapping[str, Any]) -> Iterator[render.Out]:
    task, snap = d["task"], d["state"]
    yield f"job      {d['job']}"
    yield f"name     {task['name']}"
    yield f"state    {snap['state']}" + (f" ({render.clean(snap['reason'])})" if snap.get("reason") else "")
    command = task.get("command")
    yield f"agent    {task['agent']}" + (f" {render.clean(' '.join(command))}" if command else "")
    yield (f"lane     {task.get('lane') or task.get('repo')} @ {task.get('base')}   domain {task.get('domain')}   "
           f"priority {task.get('priority')}")
    for label, key in (("worktree", "worktree"), ("branch", "branch"), ("review", "review_branch"),
                       ("tmux", "tmux_target"), ("exit", "exit_code")):
        if snap.get(key) is not None:
            yield f"{label:<8} {snap[key]}"
    if snap.get("checks"):
        yield f"checks   {snap['checks']}   (the lane's checks on its work merged into the base; zen check {d['job']})"
    if d.get("parent"):
        yield f"parent   {d['parent']}"
    if d.get("workers"):
        yield f"workers  {', '.join(d['workers'])}"
    m = d["metrics"]
    if m and (m.get("api_calls") or m.get("input_tokens") or m.get("guard", {}).get("allowed")):
        yield f"usage    {headline(m)}"
        lat = m["api_latency_ms"]
        if lat.get("count"):
            yield f"         API latency p50 {ms(lat['p50'])}, p95 {ms(lat['p95'])}   (zen metrics {d['job']})"
    yield "prompt   " + render.clean(str(task["prompt"]).strip()).replace("\n", "\n         ")
    if d["events"]:
        yield "events"
        for ev in d["events"]:
            yield "  " + format_event(ev)
