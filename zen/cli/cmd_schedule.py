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

    @app.command("gc")
    def gc(
        older_than: str = typer.Option(None, "--older-than", help="Age of finished jobs to collect (default: zen.yaml gc.older_than, 7d)."),
        records: bool = typer.Option(False, "--records", help="Also delete the job records (jobs/<id>/); branches always stay."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Remove worktrees of old finished jobs (and, with --records, their records). Never a
        branch, never a worktree holding work that is not on its review branch."""
        from zen.core.durations import parse_duration
        from zen.errors import ZenError
        from zen.orchestration.gc import collect
        from zen.store.config import Config

        home = common.home()
        text = older_than or str(Config.load(home).get("gc", "older_than"))
        try:
            age_s = parse_duration(text)
        except ValueError as exc:
            raise ZenError(f"--older-than: {exc}") from None
        done = collect(home, age_s, records=records)
        if json_out:
            common.emit_json(done)
        elif not done:
            common.say(f"nothing finished more than {text} ago")
        else:
            for d in done:
                what = "record removed" if d["record_removed"] else "worktree removed" if d["worktree_removed"] else f"kept: {d.get('kept')}"
                common.say(f"{d['job']}  {what}  (branch {d['review_branch'] or '-'} stays)")
        return 0
