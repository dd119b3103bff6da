"""`zen watch`: every job of a home, live, with keys to act on the selected one.

State flows one way: file events -> the feed's thread reads what changed -> a `FeedUpdate`
message -> `self.rows` -> the table. Keys call the same orchestration functions as the CLI, in
worker threads (a cancel waits out the agent's grace period), and their effect comes back through
the timeline like anyone else's.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, Static

from zen.errors import ZenError
from zen.orchestration.job import control, pause
from zen.store.home import Home
from zen.tui.actions import review_diff
from zen.tui.feed import Feed, Update
from zen.tui.rows import VIEWS, Filter, JobView, apply_filter, counts, segment
from zen.tui.source import Header
from zen.tui.widgets import Banner, ConfirmScreen, DiffScreen, JobTable, PromptScreen

Clock = Callable[[], datetime]


class FeedUpdate(Message):
    def __init__(self, update: Update) -> None:
        super().__init__()
        self.update = update


class WatchApp(App[None]):
    CSS_PATH = Path(__file__).with_name("watch.tcss")  # absolute: subclasses live elsewhere
    TITLE = "zen watch"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "attach", "attach"), Binding("enter", "attach", "attach", show=False),
        Binding("s", "send", "send"), Binding("f", "finish", "finish"), Binding("c", "cancel", "cancel"),
        Binding("h", "harvest", "harvest"), Binding("p", "pause", "pause/resume"), Binding("d", "diff", "diff"),
        Binding("l", "lane", "lane"), Binding("v", "view", "view"), Binding("slash", "filter", "filter"),
        Binding("escape", "clear_filter", "clear filter", show=False), Binding("q", "quit", "quit"),
    ]

    def __init__(self, home: Home, *, clock: Clock | None = None, live: bool = True) -> None:
        super().__init__()
        self.home = home
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.live = live                      # False: no feed, rows only from `load()` (snapshots)
        self.rows: dict[str, JobView] = {}
        self.header: Header | None = None
        self.filter = Filter()
        self.rings = 0                        # bells rung: a job came to need you
        self.feed: Feed | None = None
        self.updates = 0                      # FeedUpdates applied (for tests and the bench)

    # -- layout ------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Banner(id="banner")
        yield Static(id="summary")
        yield JobTable(id="jobs")
        yield Static(id="empty")
        yield Footer()

    @property
    def table(self) -> JobTable:
        return self.query_one(JobTable)

    def on_mount(self) -> None:
        self.query_one(Banner).show(None)
        if self.live:
            self.feed = Feed(self.home, lambda u: self.post_message(FeedUpdate(u)))
            self.feed.start()
        self.set_interval(1.0, self.render_rows)  # ages move on; only changed cells are redrawn

    def on_unmount(self) -> None:
        if self.feed is not None:
            self.feed.stop()

    def load(self, update: Update) -> None:
        """Apply an update directly (the feed's messages do the same)."""
        self.apply(update)

    # -- state ---------------------------------------------------------------------------------------
    def on_feed_update(self, message: FeedUpdate) -> None:
        self.apply(message.update)

    def apply(self, update: Update) -> None:
        first = not self.updates
        self.updates += 1
        if update.full:
            self.rows = {}
        newly_needing = False
        for v in update.views:
            old = self.rows.get(v.job)
            if v.needs_you and not first and (old is None or not old.needs_you):
                newly_needing = True
            self.rows[v.job] = v
        for job in update.gone:
            self.rows.pop(job, None)
        if update.header is not None:
            self.header = update.header
            self.query_one(Banner).show(update.header)
        if newly_needing:
            self.rings += 1
            self.bell()
        self.render_rows()

    def visible_rows(self) -> list[JobView]:
        return apply_filter(self.rows.values(), self.filter)

    def render_rows(self) -> None:
        views = self.visible_rows()
        now = self.clock()
        self.table.show(views, now)
        c = counts(self.rows.values())
        summary = f"{segment(c, kill=bool(self.header and self.header.kill))} · {c.ended} ended"
        shown = self.filter.describe()
        self.query_one("#summary", Static).update(
            f"{summary}    showing {shown} ({len(views)} of {len(self.rows)})")
        empty = self.query_one("#empty", Static)
        if views:
            empty.display = False
        else:
            empty.display = True
            empty.update("no jobs yet: zen dispatch \"PROMPT\" --lane LANE" if not self.rows
                         else f"no job matches {shown} (Escape clears the filter)")

    def selected(self) -> JobView | None:
        job = self.table.selected()
        return self.rows.get(job) if job else None

    # -- keys --------------------------------------------------------------------------------------------
    def _run(self, label: str, fn: Callable[[], Any]) -> None:
        """Call an orchestration function off the UI thread; say how it went."""

        def work() -> None:
            try:
                fn()
            except ZenError as exc:
                self.call_from_thread(self.notify, str(exc), title=label, severity="error")
            except Exception as exc:  # a bug must not take the view down with it
                self.call_from_thread(self.notify, f"unexpected error: {exc}", title=label, severity="error")
            else:
                self.call_from_thread(self.notify, "done", title=label)

        self.run_worker(work, thread=True, group="actions", name=label)

    def _pick(self) -> JobView | None:
        v = self.selected()
        if v is None:
            self.notify("no job selected", severity="warning")
        return v

    def action_send(self) -> None:
        v = self._pick()
        if v is None:
            return

        def sent(text: str | None) -> None:
            if text and text.strip():
                self._run(f"send to {v.name}", lambda: control.send(self.home, v.job, text))

        self.push_screen(PromptScreen(f"Send to {v.name} ({v.state_text()}):", placeholder="what to type"), sent)

    def _confirmed(self, question: str, label: str, fn: Callable[[], Any]) -> None:
        def answer(yes: bool | None) -> None:
            if yes:
                self._run(label, fn)

        self.push_screen(ConfirmScreen(question), answer)

    def action_cancel(self) -> None:
        v = self._pick()
        if v is not None:
            self._confirmed(f"Cancel {v.name} ({v.state_text()})? Its agent is stopped and its work harvested.",
                            f"cancel {v.name}", lambda: control.cancel(self.home, v.job, "cancelled in zen watch"))

    def action_finish(self) -> None:
        v = self._pick()
        if v is not None:
            self._confirmed(f"Finish {v.name}? The agent is asked to exit, then its work is harvested.",
                            f"finish {v.name}", lambda: control.finish(self.home, v.job))

    def action_harvest(self) -> None:
        v = self._pick()
        if v is not None:
            self._run(f"harvest {v.name}", lambda: control.harvest_now(self.home, v.job))

    def action_pause(self) -> None:
        """Pause a live agent (its processes stopped, its timeout clock too); resume a paused one."""
        v = self._pick()
        if v is None:
            return
        if v.state == "paused":
            self._run(f"resume {v.name}", lambda: pause.resume(self.home, v.job))
        else:
            self._run(f"pause {v.name}", lambda: pause.pause(self.home, v.job))

    def action_diff(self) -> None:
        v = self._pick()
        if v is None:
            return

        def work() -> None:
            try:
                title, text = review_diff(self.home, v)
            except ZenError as exc:
                self.call_from_thread(self.notify, str(exc), title="diff", severity="warning")
                return
            self.call_from_thread(self.push_screen, DiffScreen(title, text))

        self.run_worker(work, thread=True, group="actions", name="diff")

    def action_attach(self) -> None:
        v = self._pick()
        if v is None:
            return
        try:
            argv = control.attach_argv(self.home, v.job)
        except ZenError as exc:
            self.notify(str(exc), title="attach", severity="warning")
            return
        try:
            with self.suspend():
                # $TMUX would make tmux refuse to attach from inside another tmux
                env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
                subprocess.run(argv, env=env, check=False)
        except Exception as exc:  # no terminal to hand over (headless, a web terminal)
            self.notify(f"cannot attach from here ({exc}); run: zen attach {v.job}", severity="error")
        self.refresh()

    def action_lane(self) -> None:
        lanes = sorted({v.lane for v in self.rows.values() if v.lane})
        cycle: list[str | None] = [None, *lanes]
        at = cycle.index(self.filter.lane) if self.filter.lane in cycle else 0
        self._set_filter(Filter(lane=cycle[(at + 1) % len(cycle)], view=self.filter.view, text=self.filter.text))

    def action_view(self) -> None:
        self._set_filter(Filter(lane=self.filter.lane, view=(self.filter.view + 1) % len(VIEWS),
                                text=self.filter.text))

    def action_filter(self) -> None:
        def chosen(text: str | None) -> None:
            if text is not None:
                self._set_filter(Filter(lane=self.filter.lane, view=self.filter.view, text=text.strip()))

        self.push_screen(PromptScreen("Show jobs matching (words, or lane: state: agent: name:)",
                                      value=self.filter.text), chosen)

    def action_clear_filter(self) -> None:
        self._set_filter(Filter())

    def _set_filter(self, f: Filter) -> None:
        self.filter = f
        self.render_rows()
