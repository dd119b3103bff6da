"""`zen watch --plain`: the same rows without a full-screen app, for logs and dumb terminals.

On a terminal it is a rich live table redrawn on every change; piped, it prints the table once and
then one line per change of a job's state, so a log reads as a history.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from zen.store.home import Home
from zen.tui.feed import Feed, Update
from zen.tui.rows import JobView, age, cost_text, counts, ordered, segment, tokens_text
from zen.tui.source import Header


def title(rows: list[JobView], header: Header | None) -> str:
    text = segment(counts(rows), kill=bool(header and header.kill))
    if header is not None:
        text = f"{header.home} · {header.supervisor} · {header.breaker} · {text}"
        if header.kill:
            text = f"KILL SWITCH ENGAGED ({header.kill}) · " + text
    return text


def table(rows: list[JobView], header: Header | None, now: datetime) -> Group:
    t = Table(box=None, pad_edge=False, header_style="bold")
    for col in ("", "state", "name", "age", "for", "agent", "lane", "tokens", "cost", "last output"):
        t.add_column(col, no_wrap=True, overflow="ellipsis", max_width=60 if col == "last output" else None)
    for v in ordered(rows):
        t.add_row("!" if v.needs_you else "", v.state_text(), escape(v.name), age(v.created_at, now),
                  age(v.since, now), v.agent, escape(v.lane), tokens_text(v), cost_text(v), escape(v.detail()),
                  style="bold yellow" if v.needs_you else None)
    # the title on a line of its own: a table wraps its title to the table's width
    return Group(Text(title(rows, header), no_wrap=True, overflow="ellipsis"), t)


def change_line(old: JobView | None, new: JobView, now: datetime) -> str | None:
    """One log line when a job's state (or waiting reason) changed, else None."""
    if old is not None and (old.state, old.reason, old.needs_you) == (new.state, new.reason, new.needs_you):
        return None
    was = old.state_text() if old is not None else "new"
    flag = "  NEEDS YOU" if new.needs_you else ""
    tail = f"  {new.last_line}" if new.last_line else ""
    return f"{now.strftime('%H:%M:%S')} {new.name} ({new.job}): {was} -> {new.state_text()}{flag}{tail}"


def run_plain(home: Home, *, tty: bool, out: IO[str] | None = None,
              clock: Callable[[], datetime] | None = None, stop: threading.Event | None = None) -> int:
    out = out or sys.stdout
    clock = clock or (lambda: datetime.now(UTC))
    stop = stop or threading.Event()
    rows: dict[str, JobView] = {}
    header: list[Header | None] = [None]
    lock = threading.Lock()
    console = Console(file=out, highlight=False, soft_wrap=False, width=None if tty else 250)
    live = Live(console=console, auto_refresh=False, transient=False) if tty else None
    first = threading.Event()

    def on_update(u: Update) -> None:
        with lock:
            now = clock()
            if u.header is not None:
                header[0] = u.header
            lines = []
            for v in u.views:
                if first.is_set() and (line := change_line(rows.get(v.job), v, now)):
                    lines.append(line)
                rows[v.job] = v
            for job in u.gone:
                rows.pop(job, None)
            if live is not None:
                live.update(table(list(rows.values()), header[0], now), refresh=True)
            elif not first.is_set():
                console.print(table(list(rows.values()), header[0], now))
            else:
                for line in lines:
                    out.write(line + "\n")
                if u.header is not None and u.header.kill:
                    out.write(f"{now.strftime('%H:%M:%S')} KILL SWITCH ENGAGED ({u.header.kill})\n")
            out.flush()
            first.set()

    feed = Feed(home, on_update)
    if live is not None:
        live.start()
    feed.start()
    try:
        while not stop.wait(1.0):
            if live is not None:
                with lock:
                    live.update(table(list(rows.values()), header[0], clock()), refresh=True)
    except KeyboardInterrupt:
        pass
    finally:
        feed.stop()
        if live is not None:
            live.stop()
    return 0
