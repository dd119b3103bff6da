"""zen queue (the order queued work will start in, and why each waits), zen gc."""

from __future__ import annotations

import typer

from zen.cli import common


def register(app: typer.Typer) -> None:
    @app.command("queue")
    def queue(json_out: bool = typer.Option(False, "--json")) -> int:
        """Queued work in the order it will start, each with why it waits (slot, dependency,
        backoff, circuit breaker); tasks not yet taken in by a supervisor are listed first."""
        from zen.orchestration.query import pending_tasks
        from zen.orchestration.schedule import breaker_status, plan

        home = common.home()
        decisions = plan(home)
        pending = pending_tasks(home)
        breaker = breaker_status(home)
        rows = [{"job": t["id"], "name": t["name"], "action": "intake",
                 "why": "in the spool; a running supervisor takes it in"} for t in pending]
        rows += [{"job": d.job, "action": d.action,
                  "why": d.why} for d in decisions]
        if json_out:
            common.emit_json({"queue": rows, "breaker": breaker})
            return 0
        if breaker["open"]:
            common.err(f"circuit breaker OPEN: automatic work is held ({breaker['automatic_in_window']} automatic "
                       f"starts in the window, limit {breaker['limit']})")
        if not rows:
            common.say("the queue is empty")
            return 0
        common.table(["#", "job", "next", "why"],
                     [[str(i + 1), r["job"], r["action"], r["why"]] for i, r in enumerate(rows)])
        return 0
