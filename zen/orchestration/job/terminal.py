"""A job's terminal for the dashboard's tiles: its screen as tmux draws it, and typing into it.

tmux is the terminal emulator: the agent runs in a pane of zen's private server whose size never
changes (`window-size manual`), so the page shows tmux's own screen (rows with their colours,
the cursor) instead of replaying the raw output through a second emulator. Typing is literal
text and named keys, sent in order in one tmux call, and recorded first as `input.sent` (actor
human, via grid) like `zen send`: the timeline reads input, then the work it caused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zen.adapters import tmux as tmux_adapter
from zen.adapters.tmux import Tmux
from zen.core.events import EventType as E
from zen.core.model import JobStatus
from zen.core.results import Result
from zen.errors import UsageError, ZenError
from zen.orchestration.job.control import Sent
from zen.orchestration.read.query import resolve_job
from zen.store.home import Home
from zen.store.jobs import JobStore

# tmux key names the tiles may send (a browser keydown maps onto these)
KEY_RE = re.compile(r"^(Enter|Tab|BTab|BSpace|Escape|Space|Up|Down|Left|Right|Home|End|PPage|NPage|DC|IC"
                    r"|F(?:[1-9]|1[0-2])|C-[a-z]|M-[a-z0-9])$")
SHOWN_KEYS = {"Enter": "\n", "Tab": "\t", "Space": " "}


@dataclass(frozen=True)
class Screen(Result):
    """A pane's visible screen: its rows joined by newlines (with SGR colour escapes), the
    cursor, the size, and whether an agent is live in it."""

    job: str
    text: str = ""
    cursor_x: int = 0
    cursor_y: int = 0
    width: int = 0
    height: int = 0
    live: bool = False


def screen(home: Home, ref: str) -> Screen:
    """The visible screen of the job's pane: rows (with SGR colour escapes), cursor, size."""
    job_id = resolve_job(home, ref)
    snap = JobStore(home).snapshot(job_id)
    tmux = Tmux.for_home(home)
    info = tmux.pane(snap.tmux_session) if snap.tmux_session else None
    got = tmux_adapter.screen(tmux, info.pane_id) if info is not None else None
    if got is None:
        return Screen(job_id)
    rows, cx, cy, w, h = got
    return Screen(job_id, "\n".join(rows), cx, cy, w, h, bool(info and not info.dead and snap.state.live))


def screens(home: Home, job_ids: list[str]) -> dict[str, Screen]:
    """The screens of several jobs at once (the page's one stream): one listing of the panes for
    all of them, then one tmux call per pane. A job without a pane gets an empty, not-live Screen."""
    store = JobStore(home)
    tmux = Tmux.for_home(home)
    try:
        panes = tmux.panes()
    except ZenError:
        panes = {}
    out: dict[str, Screen] = {}
    for job_id in job_ids:
        try:
            snap = store.snapshot(job_id, write=False)
        except (ZenError, OSError, ValueError):
            continue
        info = panes.get(snap.tmux_session) if snap.tmux_session else None
        got = tmux_adapter.screen(tmux, info.pane_id) if info is not None else None
        if got is None:
            out[job_id] = Screen(job_id)
            continue
        rows, cx, cy, w, h = got
        out[job_id] = Screen(job_id, "\n".join(rows), cx, cy, w, h, bool(info and not info.dead and snap.state.live))
    return out


def describe(items: list[tuple[str, str]]) -> str:
    """The typed items as the timeline shows them: text as typed, other keys as <Name>."""
    return "".join(v if k == "text" else SHOWN_KEYS.get(v, f"<{v}>") for k, v in items)


def type_keys(home: Home, ref: str, items: list[tuple[str, str]], *, via: str = "grid") -> Sent:
    """Type into a live agent's terminal (a human at a focused tile); recorded as input.sent."""
    if not items:
        raise UsageError("nothing to type")
    for kind, value in items:
        if kind == "key" and not KEY_RE.match(value):
            raise UsageError(f"{value!r} is not a key the terminal takes (Enter, BSpace, Up, C-c, F1, ...)")
        if kind not in ("key", "text") or not value:
            raise UsageError("each item is a non-empty text or a key name")
    store = JobStore(home)
    job_id = resolve_job(home, ref)
    snap = store.snapshot(job_id)
    if not snap.state.live or snap.state is JobStatus.starting:
        raise ZenError(f"job {job_id} is {snap.state.value}, so there is no agent to type into")
    tmux = Tmux.for_home(home)
    info = tmux.pane(snap.tmux_session) if snap.tmux_session else None
    if info is None or info.dead:
        raise ZenError(f"job {job_id} has no running agent in tmux")
    text = describe(items)
    shown = text if len(text) <= 2000 else text[:2000] + "..."
    ev = store.append(job_id, E.INPUT_SENT, actor="human", text=shown, chars=len(text), via=via,
                      keys=[v for k, v in items if k == "key"])
    try:
        tmux_adapter.type_into(tmux, info.pane_id, items)
    except ZenError as exc:
        store.append(job_id, E.INPUT_FAILED, actor="human", reason=str(exc))
        raise
    return Sent(job_id, ev["seq"], snap.state.value)


__all__ = ["KEY_RE", "Screen", "describe", "screen", "screens", "type_keys"]
