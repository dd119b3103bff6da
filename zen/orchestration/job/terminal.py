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


HISTORY_LINES = 2000        # scrollback a terminal is seeded with when the page attaches
REPLAY_BYTES = 256 * 1024   # the end of an ended job's output the page replays
MIN_COLS, MAX_COLS, MIN_ROWS, MAX_ROWS = 20, 400, 5, 150


@dataclass(frozen=True)
class Seed(Result):
    """What a terminal in the page starts from: the pane's scrollback and screen as tmux holds
    them (SGR kept, rows joined by CRLF), the cursor, the size, and the byte offset of pane.log
    its output stream continues from."""

    job: str
    data: str = ""
    cursor_x: int = 0
    cursor_y: int = 0
    width: int = 0
    height: int = 0
    offset: int = 0
    live: bool = False


def _pane_of(home: Home, job_id: str) -> tuple[Tmux, str] | None:
    snap = JobStore(home).snapshot(job_id, write=False)
    if not snap.state.live or not snap.tmux_session:
        return None
    tmux = Tmux.for_home(home)
    info = tmux.pane(snap.tmux_session)
    return (tmux, info.pane_id) if info is not None and not info.dead else None


def seed(home: Home, job_id: str) -> Seed:
    """The pane's scrollback and screen now, and where in pane.log the stream of its output goes on."""
    got = _pane_of(home, job_id)
    if got is None:
        return Seed(job_id)
    tmux, pane = got
    r = tmux.run_chain(["display-message", "-p", "-t", pane, tmux_adapter.SCREEN_FORMAT],
                       ["capture-pane", "-p", "-e", "-S", f"-{HISTORY_LINES}", "-t", pane], check=False)
    lines = list(r.stdout) if not isinstance(r.stdout, str) else r.stdout.split("\n")
    try:
        offset = home.job(job_id).pane_log.stat().st_size   # after the capture: nothing shown twice
    except OSError:
        offset = 0
    if r.returncode != 0 or not lines:
        return Seed(job_id, offset=offset)
    try:
        cx, cy, w, h = (int(x) for x in lines[0].split())
    except ValueError:
        return Seed(job_id, offset=offset)
    rows = lines[1:]
    # the screen is the last `h` rows tmux gave (fewer when the pane has not filled yet)
    rows += [""] * max(0, h - len(rows))
    return Seed(job_id, "\x1b[0m" + "\r\n".join(rows), cx, cy, w, h, offset, True)


def output(home: Home, job_id: str, offset: int, limit: int = 1 << 20) -> tuple[bytes, int]:
    """What the pane printed since `offset` (at most `limit` bytes), and the offset after it."""
    try:
        with open(home.job(job_id).pane_log, "rb") as f:
            f.seek(offset)
            data = f.read(limit)
    except OSError:
        return b"", offset
    return data, offset + len(data)


def replay(home: Home, ref: str) -> tuple[str, bool]:
    """The end of a job's output as the pane printed it (escapes kept), and whether it was cut."""
    job_id = resolve_job(home, ref)
    path = home.job(job_id).pane_log
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            f.seek(max(0, size - REPLAY_BYTES))
            data = f.read()
    except OSError:
        return "", False
    return data.decode("utf-8", errors="replace"), size > REPLAY_BYTES


def resize(home: Home, ref: str, cols: int, rows: int) -> Screen:
    """Make the job's pane `cols` x `rows` (the page's terminal follows its tile): the agent
    gets SIGWINCH and redraws. The pane keeps that size until the next resize."""
    if not (MIN_COLS <= cols <= MAX_COLS and MIN_ROWS <= rows <= MAX_ROWS):
        raise UsageError(f"a terminal is {MIN_COLS}-{MAX_COLS} columns by {MIN_ROWS}-{MAX_ROWS} rows, "
                         f"not {cols}x{rows}")
    job_id = resolve_job(home, ref)
    got = _pane_of(home, job_id)
    if got is None:
        raise ZenError(f"job {job_id} has no running agent to resize")
    tmux, pane = got
    tmux.run("resize-window", "-t", pane, "-x", str(cols), "-y", str(rows))
    return screen(home, job_id)


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


__all__ = ["KEY_RE", "Screen", "Seed", "describe", "output", "replay", "resize", "screen", "seed", "type_keys"]
