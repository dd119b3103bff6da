"""`zen watch --plain`: the same rows without a full-screen app, for logs and dumb terminals.

On a terminal it is a rich live table redrawn on every change; piped, it prints the table once and
then one line per change of a job's state, so a log reads as a history.

It stops at once on Ctrl-C, on SIGTERM (the same clean-up: the terminal restored, exit 0), and
when what reads its output goes away (`zen watch --plain | head`, a closed terminal): the main
thread waits on its output's file descriptor, which reports that at once, rather than finding out
at the next change, or never when nothing changes.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator
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


TICK_S = 1.0  # the live table's ages are redrawn this often


class Output:
    """The stream the view writes to, and whether anyone still reads it."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.gone = False
        self._poll: select.poll | None = None
        try:
            fd = out.fileno()
        except (OSError, ValueError):  # a StringIO, a closed stream: nothing to wait on
            return
        self._poll = select.poll()
        self._poll.register(fd, 0)  # no events asked for: only an error or a hang-up wakes it

    def wait(self, stop: threading.Event, timeout_s: float) -> bool:
        """Sleep up to `timeout_s`; True when it is time to stop (asked to, or the reader left)."""
        if self._poll is None or self.gone:
            return stop.wait(timeout_s) or self.gone
        if self._poll.poll(timeout_s * 1000):
            self.left()
        return self.gone or stop.is_set()

    def left(self) -> None:
        """The reader went away: later writes (and the exit's flush) go to /dev/null, silently."""
        self.gone = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())
            os.close(devnull)


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt as Ctrl-C does, so a stop by `kill` gets the same clean-up
    (in the main thread only: elsewhere Python installs no signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
    output = Output(out)

    def on_update(u: Update) -> None:
        with lock:
            if output.gone:
                return
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
            try:
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
            except OSError:  # the reader left (EPIPE) or the terminal hung up (EIO)
                output.left()
                stop.set()
            first.set()

    feed = Feed(home, on_update)
    with sigterm_interrupts():
        try:
            if live is not None:
                live.start()
            feed.start()
            while not output.wait(stop, TICK_S):
                if live is not None:
                    with lock:
                        try:
                            live.update(table(list(rows.values()), header[0], clock()), refresh=True)
                        except OSError:  # the terminal hung up
                            output.left()
        except KeyboardInterrupt:
            pass
        finally:
            feed.stop()
            if live is not None:
                with contextlib.suppress(OSError):  # a terminal that hung up
                    live.stop()
    return 0
