"""Goal continuation in the supervisor (DESIGN 13): a job with `goal: until-done` is continued
after each turn until it reports done, stopped as blocked by zen.core.goal's rule, or stopped by
a budget. This is the supervisor's side: reading each ended turn from the timeline and the
worktree, recording it (`goal.turn`), and acting on the decision (`goal.continued`, `goal.held`,
`goal.blocked`, `goal.done`, `goal.stopped`).

Everything is read back from the timeline, so a restarted supervisor picks up where the last one
was (a held continuation included). The blocker rule's clock is the system clock, or the file
teams.clock_file names (tests and replays); the wall budget is always real time.
"""

from __future__ import annotations

import logging
import signal
import time
from pathlib import Path
from typing import Any

from zen.adapters import git as g
from zen.adapters.tmux import Tmux, signal_pane
from zen.agents import get_adapter
from zen.core import goal, messages
from zen.core.events import Actor
from zen.core.events import EventType as E
from zen.core.ids import parse_iso
from zen.core.inert import inert_text
from zen.core.model import JobStatus, Task
from zen.errors import ZenError
from zen.observe.metrics import headline
from zen.orchestration.safety import breaker
from zen.orchestration.teams.ops import send_to
from zen.orchestration.teams.workers import Caller
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import JobStore

log = logging.getLogger(__name__)

UNTIL_DONE = "until-done"
ENDS = (E.GOAL_DONE, E.GOAL_BLOCKED, E.GOAL_STOPPED)
USAGE_WAIT_S = 1.0                     # how long a turn's usage may trail its end (the Stop hook)


def continuation_prompt(task: Task, turn: int, used: dict[str, Any]) -> str:
    budget = task.budget
    caps = []
    if budget is not None and budget.tokens:
        caps.append(f"tokens {used.get('tokens', 0)} of {budget.tokens}")
    if budget is not None and budget.cost_usd:
        caps.append(f"cost ${used.get('cost_usd', 0):.4f} of ${budget.cost_usd:.4f}")
    text = (f"[zen: goal turn {turn}] Continue towards your goal: {task.prompt.strip().splitlines()[0][:300]} "
            "When it is done, call agent_report with status done and a summary. If something stops you, "
            "call agent_report with status blocked and the blocker.")
    return text + (f" Budget used: {', '.join(caps)}." if caps else "")


class Clock:
    """The goal clock: epoch seconds, from teams.clock_file when one is set."""

    def __init__(self, home: Home) -> None:
        self.home = home

    def __call__(self) -> float:
        try:
            path = str(Config.load(self.home).get("teams", "clock_file") or "")
        except ZenError:
            path = ""
        if path:
            try:
                return float(Path(path).read_text().strip())
            except (OSError, ValueError):
                log.warning("teams.clock_file %s is unreadable; using the system clock", path)
        return time.time()


def limits(cfg: Config, task: Task) -> goal.Limits:
    b = task.budget
    return goal.Limits(blocked_turns=int(cfg.get("teams", "goal_blocked_turns")),
                       blocked_span_s=cfg.seconds("teams", "goal_blocked_span"),
                       max_turns=int(cfg.get("teams", "goal_max_turns")),
                       tokens=b.tokens if b else None, cost_usd=b.cost_usd if b else None,
                       wall_s=b.wall_s if b else None)


def _after(events: list[dict[str, Any]], *types: str) -> int:
    """Index of the last event of one of `types` (-1 if none)."""
    return max((i for i, e in enumerate(events) if e.get("type") in types), default=-1)


def _restart(events: list[dict[str, Any]]) -> int:
    """Index of the last `continue` a parent (or a human) gave with agent_control: the goal goes
    on from there with a fresh count (-1 if none)."""
    return max((i for i, e in enumerate(events) if e.get("type") == E.TEAM_CONTROL and e.get("action") == "continue"),
               default=-1)


def _turn_hooks(task: Task, events: list[dict[str, Any]]) -> bool:
    """Does this job's agent report its turns through hooks (its adapter says so, or its hooks
    already did)?"""
    if getattr(get_adapter(task.agent), "turn_hooks", False):
        return True
    return any(e.get("actor") == Actor.HOOK and e.get("type") in (E.TURN_WORKING, E.TURN_WAITING) for e in events)


class GoalKeeper:
    def __init__(self, home: Home, store: JobStore, tmux: Tmux, clock: Any = None) -> None:
        self.home = home
        self.store = store
        self.tmux = tmux
        self.clock = clock or Clock(home)
        self.held: dict[str, float] = {}       # job -> goal clock time its continuation waits for
        self.seen: dict[str, int] = {}         # job -> timeline size when last evaluated
        self.deferred: dict[str, float] = {}   # job -> when its turn's usage was first awaited

    # -- the supervisor's calls ------------------------------------------------------------
    def after_turn(self, job_id: str) -> None:
        """Called while a job waits: if a goal's turn has ended and is not judged yet, judge it."""
        try:
            size = self.store.events_path(job_id).stat().st_size
        except OSError:
            return
        if self.seen.get(job_id) == size:
            return
        self.seen[job_id] = size
        try:
            task = self.store.task(job_id)
            if task.goal == UNTIL_DONE:
                self._judge(job_id, task)
        except ZenError as exc:
            log.warning("job %s: goal continuation failed: %s", job_id, exc)

    def tick(self) -> None:
        """Continue the held goals whose time has come."""
        if not self.held:
            return
        now = self.clock()
        for job_id, until in list(self.held.items()):
            if now >= until:
                del self.held[job_id]
                try:
                    self._resume(job_id)
                except ZenError as exc:
                    log.warning("job %s: held continuation failed: %s", job_id, exc)

    def forget(self, job_id: str) -> None:
        self.held.pop(job_id, None)
        self.seen.pop(job_id, None)

    # -- judging a turn --------------------------------------------------------------------
    def _judge(self, job_id: str, task: Task) -> None:
        events = self.store.events(job_id)
        if _after(events, *ENDS) > _restart(events) and _after(events, *ENDS) >= 0:
            return  # the goal has ended (a parent's `continue` control starts it again)
        last_turn = _after(events, E.GOAL_TURN)
        boundary = max(_after(events, E.GOAL_CONTINUED), _after(events, E.AGENT_SPAWNED), _restart(events))
        if last_turn > boundary:
            held = _after(events, E.GOAL_HELD)
            if held > last_turn and job_id not in self.held:
                self.held[job_id] = float(events[held]["until"])   # a restart: the hold goes on
            return
        window = events[boundary + 1:]
        snap = self.store.snapshot(job_id, write=False)
        if _turn_hooks(task, events):
            # its own hook says when a turn ends (Stop): a silence zen read off the terminal is not
            # one (a loaded machine can hold an agent still for seconds before its turn even starts)
            ended = messages.at_prompt(window, False)
        else:
            ended = any(e.get("type") == E.TURN_WAITING for e in window)
        if not ended or snap.state is not JobStatus.waiting or not messages.at_prompt(events, True):
            return
        if self._usage_due(job_id, window):
            return
        self._record_turn(job_id, task, events, window)

    def _usage_due(self, job_id: str, window: list[dict[str, Any]]) -> bool:
        """A Stop hook records the turn's usage just after its end: give it a moment, so the budget
        is judged on the turn's own tokens (and look again next time: nothing else may change)."""
        last_wait = _after(window, E.TURN_WAITING)
        if window[last_wait].get("actor") != "hook" or _after(window, E.USAGE) > last_wait:
            self.deferred.pop(job_id, None)
            return False
        first = self.deferred.setdefault(job_id, time.monotonic())
        if time.monotonic() - first < USAGE_WAIT_S:
            self.seen.pop(job_id, None)
            return True
        self.deferred.pop(job_id, None)
        return False

    def _record_turn(self, job_id: str, task: Task, events: list[dict[str, Any]],
                     window: list[dict[str, Any]]) -> None:
        reports = [e for e in window if e.get("type") == E.TEAM_REPORT]
        done = next((e for e in reports if e.get("status") == "done"), None)
        blocked = next((e for e in reversed(reports) if e.get("status") == "blocked"), None)
        blocker = str(blocked.get("blocker") or "") if blocked else None
        snap = self.store.snapshot(job_id, write=False)
        prev = [e for e in events if e.get("type") == E.GOAL_TURN]
        since = _restart(events)
        head, tree = self._worktree_state(snap.worktree)
        before = prev[-1] if prev else {"head": snap.base_commit, "tree": self._base_tree(snap)}
        progress = bool(head and (head != before.get("head") or tree != before.get("tree")))
        used = headline(snap.usage)
        at = self.clock()
        n = len(prev) + 1
        fields: dict[str, Any] = {"turn": n, "at": round(at, 3), "progress": progress, "done": done is not None,
                                  "tokens": used["tokens"], "cost_usd": round(used["cost_usd"], 6)}
        if blocker:
            fields.update(blocker=blocker[:500], fingerprint=goal.fingerprint(blocker))
        fields.update({k: v for k, v in (("head", head), ("tree", tree)) if v})
        self.store.append(job_id, E.GOAL_TURN, **fields)
        # turns since the goal last (re)started: a parent's `continue` gives it a fresh count
        turns = [goal.Turn(n=int(e["turn"]), at=float(e["at"]), blocker=e.get("fingerprint"),
                           progress=bool(e.get("progress")), done=bool(e.get("done")))
                 for i, e in enumerate(events) if e.get("type") == E.GOAL_TURN and i > since]
        turns.append(goal.Turn(n=n, at=at, blocker=fields.get("fingerprint"), progress=progress,
                               done=done is not None))
        cfg = Config.load(self.home)
        started = parse_iso(snap.started_at).timestamp() if snap.started_at else time.time()
        lim = limits(cfg, task)
        decision = goal.decide(turns, lim, started_at=started, now=at, tokens=used["tokens"],
                               cost_usd=used["cost_usd"])
        if decision.action == goal.BUDGET and lim.wall_s is not None:
            decision = self._real_wall(decision, turns, lim, started, used)
        self._act(job_id, task, decision, n, blocker, turns, done)

    def _real_wall(self, decision: goal.Decision, turns: list[goal.Turn], lim: goal.Limits, started: float,
                   used: dict[str, Any]) -> goal.Decision:
        """The wall budget is real time even when the blocker rule's clock is not."""
        return goal.decide(turns, lim, started_at=started, now=time.time(), tokens=used["tokens"],
                           cost_usd=used["cost_usd"])

    def _act(self, job_id: str, task: Task, d: goal.Decision, n: int, blocker: str | None,
             turns: list[goal.Turn], done: dict[str, Any] | None) -> None:
        if d.action == goal.DONE:
            self.store.append(job_id, E.GOAL_DONE, turns=n, summary=str((done or {}).get("summary") or "")[:2000])
            self._finish(job_id)
        elif d.action == goal.BUDGET:
            self.store.append(job_id, E.GOAL_STOPPED, reason=d.reason, turns=n)
            self._tell_parent(task, job_id, f"stopped: {d.reason}")
            self._finish(job_id)
        elif d.action == goal.BLOCKED:
            run = goal.streak(turns)
            self.store.append(job_id, E.GOAL_BLOCKED, blocker=(blocker or "")[:500], turns=n, reason=d.reason,
                               span_s=round(run[-1].at - run[0].at, 3) if run else 0.0, at=round(run[-1].at, 3))
            self._tell_parent(task, job_id, f"is blocked: {blocker}")
        elif d.action == goal.HOLD and d.until is not None:
            self.store.append(job_id, E.GOAL_HELD, until=round(d.until, 3), reason=d.reason, streak=d.streak, turn=n)
            self.held[job_id] = d.until
        else:
            self._continue(job_id, task, n + 1)

    # -- acting ------------------------------------------------------------------------------
    def _resume(self, job_id: str) -> None:
        snap = self.store.snapshot(job_id, write=False)
        if snap.state is not JobStatus.waiting:
            return
        events = self.store.events(job_id)
        self._continue(job_id, self.store.task(job_id), sum(1 for e in events if e.get("type") == E.GOAL_TURN) + 1)

    def _continue(self, job_id: str, task: Task, turn: int) -> None:
        cfg = Config.load(self.home)
        now = time.time()
        for kind in (breaker.CONTINUATION, *((breaker.WORKER_TURN,) if task.parent else ())):
            until = breaker.try_kind(self.home, cfg, kind, now)
            if until is not None:
                # the breaker's time is real time; the hold is on the goal clock
                wait = self.clock() + (until - now)
                self.store.append(job_id, E.GOAL_HELD, until=round(wait, 3), turn=turn - 1,
                                  reason=f"the circuit breaker is open for {kind.replace('_', ' ')}s")
                self.held[job_id] = wait
                return
        snap = self.store.snapshot(job_id, write=False)
        info = self.tmux.pane(snap.tmux_session) if snap.tmux_session else None
        if info is None or info.dead:
            return
        text = inert_text(continuation_prompt(task, turn, headline(snap.usage)))
        self.store.append(job_id, E.GOAL_CONTINUED, turn=turn, at=round(self.clock(), 3))
        self.store.append(job_id, E.INPUT_SENT, text=text, chars=len(text))
        self.tmux.send_text(info.pane_id, text, inert=True)  # the goal's words are an agent's (H6)

    def _finish(self, job_id: str) -> None:
        """End the agent gracefully (its exit keys, else TERM); the supervisor then harvests."""
        snap = self.store.snapshot(job_id, write=False)
        info = self.tmux.pane(snap.tmux_session) if snap.tmux_session else None
        if info is None or info.dead:
            return
        self.store.append(job_id, E.FINISH_REQUESTED, actor="supervisor")
        keys = get_adapter(snap.agent or "cmd").exit_keys
        if keys:
            self.tmux.send_keys(info.pane_id, keys)
        else:
            signal_pane(info, signal.SIGTERM)

    def _tell_parent(self, task: Task, job_id: str, what: str) -> None:
        if not task.parent or not self.store.exists(task.parent):
            return
        if not self.store.snapshot(task.parent, write=False).state.live:
            return
        try:
            send_to(self.home, Caller(job_id), task.parent, f"Worker {job_id} ({task.name}) {what}", kind="report")
        except ZenError as exc:
            log.info("job %s: could not tell parent %s: %s", job_id, task.parent, exc)

    @staticmethod
    def _worktree_state(worktree: str | None) -> tuple[str | None, str | None]:
        if not worktree or not Path(worktree).is_dir():
            return None, None
        try:
            return g.rev(Path(worktree), "HEAD"), g.snapshot_tree(Path(worktree))
        except ZenError:
            return None, None

    @staticmethod
    def _base_tree(snap: Any) -> str | None:
        if not snap.worktree or not snap.base_commit:
            return None
        try:
            return g.tree_of(Path(snap.worktree), snap.base_commit)
        except ZenError:
            return None
