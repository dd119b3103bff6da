"""zen dispatch, status, show, log, doctor."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import typer

from zen.cli import common
from zen.core.durations import format_duration
from zen.errors import InvalidTask


def _age(ts: str | None) -> str:
    if not ts:
        return "-"
    from zen.core.ids import parse_iso, utcnow

    try:
        return format_duration((utcnow() - parse_iso(ts)).total_seconds())
    except ValueError:
        return "-"


def format_event(ev: dict[str, Any]) -> str:
    skip = {"v", "seq", "ts", "job", "type", "actor", "task"}
    extras = " ".join(f"{k}={v}" for k, v in ev.items() if k not in skip)
    ts = str(ev.get("ts", ""))[11:23]
    return f"{ev.get('seq', '?'):>4} {ts} {ev.get('type', '?'):<18} {ev.get('actor', ''):<10} {extras}".rstrip()


def register(app: typer.Typer) -> None:
    @app.command("dispatch")
    def dispatch(
        prompt: str = typer.Argument(None, help="What the agent should do; - reads it from stdin."),
        name: str = typer.Option(None, "--name", help="Short name of the task (default: from the prompt)."),
        lane: str = typer.Option(None, "--lane", help="Lane to work on."),
        repo: str = typer.Option(None, "--repo", help="A repository path instead of a lane."),
        agent: str = typer.Option(None, "--agent", help="claude | codex | aider | gemini | sim | cmd."),
        cmd: str = typer.Option(None, "--cmd", help="For --agent cmd: the command line, split like a shell would."),
        priority: str = typer.Option(None, "--priority", help="1 (first) to 5 (last); default 3."),
        depends_on: list[str] = typer.Option([], "--depends-on", help="Name or id of a job to harvest first (repeatable)."),
        timeout: str = typer.Option(None, "--timeout", help="Stop the agent after this long, e.g. 30m."),
        retries: int = typer.Option(None, "--retries", help="Retry a failed start this many times."),
        domain: str = typer.Option(None, "--domain", help="Autonomy domain (default: the lane's)."),
        base: str = typer.Option(None, "--base", help="Ref the worktree starts from (default: the lane's base)."),
        task_file: Path = typer.Option(None, "--file", help="Read the task from a YAML file (flags override it)."),
        json_out: bool = typer.Option(False, "--json", help="Print the task as written."),
    ) -> int:
        """Queue a task for the supervisor: validated first, then written to the spool atomically."""
        from zen.orchestration.dispatch import dispatch as do_dispatch

        if prompt == "-":
            prompt = sys.stdin.read()
        if retries is not None and retries < 0:
            raise InvalidTask("--retries must be 0 or more")
        if prompt is None and task_file is None:
            raise InvalidTask("the prompt is empty (give the task as text, or - to read it from stdin)")
        if agent is not None and agent not in ("claude", "codex", "aider", "gemini", "sim", "cmd"):
            raise InvalidTask(f"unknown agent {agent!r} (claude, codex, aider, gemini, sim or cmd)")
        if cmd is not None and agent is None:
            agent = "cmd"
        if timeout is not None:
            from zen.core.durations import parse_duration

            try:
                if parse_duration(timeout) <= 0:
                    raise ValueError("the timeout must be positive")
            except ValueError as exc:
                raise InvalidTask(f"--timeout: {exc}") from None
        fields = {
            "prompt": prompt, "name": name, "lane": lane, "repo": repo, "agent": agent,
            "command": cmd, "priority": priority, "depends_on": list(depends_on), "timeout": timeout,
            "max_retries": retries, "domain": domain, "base": base,
        }
        task = do_dispatch(common.home(), fields, task_file)
        if json_out:
            common.emit_json(task.model_dump(mode="json"))
        else:
            common.say(task.id)
        return 0

    @app.command("status")
    def status(json_out: bool = typer.Option(False, "--json")) -> int:
        """Tasks waiting in the spool, every job with its state, and whether a supervisor runs."""
        from zen.orchestration.query import job_rows, pending_tasks
        from zen.orchestration.schedule import breaker_status
        from zen.orchestration.status import supervisor_status

        home = common.home()
        pending = pending_tasks(home)
        jobs = job_rows(home)
        sup = supervisor_status(home)
        breaker = breaker_status(home)
        if json_out:
            common.emit_json({
                "supervisor": sup,
                "breaker": breaker,
                "pending": [{"id": t["id"], "name": t["name"], "agent": t["agent"],
                             "lane": t.get("lane") or t.get("repo"), "created_at": t["created_at"]} for t in pending],
                "jobs": [j.model_dump(mode="json") for j in jobs],
            })
            return 0
        for line in sup.get("banner", []):
            common.err(line)
        common.say(sup["summary"])
        state = "OPEN: automatic work is held" if breaker["open"] else "closed"
        common.say(f"circuit breaker: {state} ({breaker['automatic_in_window']} automatic starts in the last "
                   f"{format_duration(breaker['window_s'])}, limit {breaker['limit']})")
        rows = [[t["id"], t["name"], "pending", t["agent"], t.get("lane") or t.get("repo") or "", _age(t["created_at"])]
                for t in pending]
        rows += [[j.job, j.name, j.state.value + (f" ({j.reason})" if j.reason else ""), j.agent or "",
                  j.lane or "", _age(j.created_at)] for j in jobs]
        if rows:
            common.table(["id", "name", "state", "agent", "lane", "age"], rows)
        else:
            common.say("no tasks or jobs yet (zen dispatch \"PROMPT\")")
        return 0

    @app.command("show")
    def show(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        events: int = typer.Option(10, "--events", help="How many of the last events to show."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """A job's task, state and last events."""
        from zen.orchestration.query import resolve_job
        from zen.store.jobs import JobStore

        home = common.home()
        job_id = resolve_job(home, job)
        store = JobStore(home)
        task = store.task(job_id)
        snap = store.snapshot(job_id)
        evs = store.events(job_id)[-events:] if events > 0 else []
        if json_out:
            common.emit_json({"task": task.model_dump(mode="json"), "state": snap.model_dump(mode="json"),
                              "events": evs})
            return 0
        common.say(f"job      {job_id}")
        common.say(f"name     {task.name}")
        common.say(f"state    {snap.state.value}" + (f" ({snap.reason})" if snap.reason else ""))
        common.say(f"agent    {task.agent.value}" + (f" {' '.join(task.command)}" if task.command else ""))
        common.say(f"lane     {task.lane or task.repo} @ {task.base}   domain {task.domain}   priority {task.priority}")
        for label, value in (("worktree", snap.worktree), ("branch", snap.branch), ("review", snap.review_branch),
                             ("tmux", snap.tmux_target), ("exit", snap.exit_code)):
            if value is not None:
                common.say(f"{label:<8} {value}")
        if snap.usage:
            common.say("usage    " + " ".join(f"{k}={v:g}" for k, v in sorted(snap.usage.items())))
        common.say("prompt   " + task.prompt.strip().replace("\n", "\n         "))
        if evs:
            common.say("events")
            for ev in evs:
                common.say("  " + format_event(ev))
        return 0

    @app.command("log")
    def log(
        job: str = typer.Argument(..., help="Job id, unique prefix, or name."),
        json_out: bool = typer.Option(False, "--json", help="One JSON event per line, as stored."),
        follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new events until the job ends."),
    ) -> int:
        """A job's timeline."""
        import json

        from zen.orchestration.query import resolve_job
        from zen.store import events as ev_store
        from zen.store.jobs import JobStore

        home = common.home()
        job_id = resolve_job(home, job)
        store = JobStore(home)
        path = store.events_path(job_id)
        offset = 0
        while True:
            new, offset = ev_store.read_from(path, offset)
            for ev in new:
                line = json.dumps(ev, separators=(",", ":")) if json_out else format_event(ev)
                sys.stdout.write(line + "\n")
            sys.stdout.flush()
            if not follow:
                return 0
            if store.snapshot(job_id, write=False).state.final and not new:
                return 0
            time.sleep(0.2)

    doctor = typer.Typer(help="Check and repair job records.", invoke_without_command=True)

    @app.command("doctor")
    def doctor_cmd(
        job: str = typer.Argument(None, help="Only this job (default: all)."),
        rebuild: bool = typer.Option(False, "--rebuild", help="Rebuild state.json from events.jsonl."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Verify every job's timeline (seq gap-free) and, with --rebuild, rebuild state.json from it."""
        from zen.orchestration.query import resolve_job
        from zen.store.jobs import JobStore

        home = common.home()
        store = JobStore(home)
        ids = [resolve_job(home, job)] if job else store.ids()
        report = []
        for job_id in ids:
            evs = store.events(job_id)
            seqs = [int(e["seq"]) for e in evs]
            gap_free = seqs == list(range(1, len(seqs) + 1))
            snap = store.rebuild(job_id) if rebuild else store.snapshot(job_id)
            report.append({"job": job_id, "events": len(evs), "gap_free": gap_free,
                           "state": snap.state.value, "rebuilt": rebuild})
        if json_out:
            common.emit_json(report)
        else:
            for r in report:
                mark = "ok" if r["gap_free"] else "SEQ GAP"
                common.say(f"{r['job']}  {r['events']} events  {mark}  {r['state']}" + ("  (rebuilt)" if rebuild else ""))
            if not report:
                common.say("no jobs")
        return 0 if all(r["gap_free"] for r in report) else 1

    del doctor
