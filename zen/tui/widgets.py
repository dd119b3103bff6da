"""The watch's widgets: the banner, the job table and the small dialogs. No I/O here: the app
feeds them rows and asks them for answers."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static

from zen.tui.rows import JobView, age, cost_text, tokens_text
from zen.tui.source import Header

COLUMNS = (("state", "state", 22), ("name", "name", 20), ("age", "age", 5), ("for", "for", 5),
           ("agent", "agent", 7), ("lane", "lane", 9), ("tokens", "tokens", 6), ("cost", "cost", 7))
LAST = ("last", "last output")
STATE_STYLE = {"waiting": "bold yellow", "working": "green", "starting": "cyan", "queued": "blue",
               "pending": "blue", "paused": "cyan", "exited": "magenta", "harvested": "dim", "failed": "bold red",
               "cancelled": "dim red"}
MARK = {"paused": "‖", "waiting": "●", "working": "▶", "starting": "…", "queued": "·", "pending": "·", "exited": "■",
        "harvested": "✓", "failed": "✗", "cancelled": "–"}


class Banner(Static):
    """The home, the supervisor, the breaker and the kill switch, in one or two lines."""

    def show(self, header: Header | None) -> None:
        if header is None:
            self.update("reading the home…")
            return
        text = Text()
        if header.kill:
            text.append(f" KILL SWITCH ENGAGED: every domain is observe-only ({header.kill}) ", style="bold white on red")
            text.append("\n")
        text.append(f"{header.home}  ", style="bold")
        text.append(header.supervisor, style="green" if header.supervisor_running else "bold red")
        text.append("  ·  ")
        text.append(header.breaker, style="bold yellow" if header.breaker_open else "")
        self.update(text)


def row_cells(v: JobView, now: datetime, last_width: int) -> list[Text]:
    base = "bold yellow" if v.needs_you else ""
    mark = "❯" if v.needs_you else MARK.get(v.state, " ")
    state = Text(f"{mark} {v.state_text()}", style=STATE_STYLE.get(v.state, "") if not v.needs_you else base)
    detail = v.detail()
    line = detail if len(detail) <= last_width else detail[: max(1, last_width - 1)] + "…"
    cells = [state, Text(v.name, style=base or "bold"), Text(age(v.created_at, now)), Text(age(v.since, now)),
             Text(v.agent), Text(v.lane), Text(tokens_text(v), justify="right"), Text(cost_text(v), justify="right"),
             Text(line, style=base or "dim")]
    return cells


class JobTable(DataTable[Text]):
    """One row per job, keyed by job id, in the order the app gives."""

    def __init__(self, **kw: object) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kw)  # type: ignore[arg-type]
        self._order: list[str] = []
        self._shown: dict[str, list[str]] = {}
        self._seen: dict[str, tuple[JobView, str, str]] = {}
        self._last_width = 40
        self._last_show: tuple[list[JobView], datetime] | None = None

    def on_mount(self) -> None:
        for key, label, width in COLUMNS:
            self.add_column(label, key=key, width=width)
        self.add_column(LAST[1], key=LAST[0], width=self._last_width)

    def last_width(self, total: int) -> int:
        fixed = sum(w + 2 for _, _, w in COLUMNS)
        return max(16, total - fixed - 4)

    def selected(self) -> str | None:
        if not self._order or self.cursor_row < 0 or self.cursor_row >= len(self._order):
            return None
        return self._order[self.cursor_row]

    def show(self, views: list[JobView], now: datetime) -> None:
        """Make the table show `views` in this order, touching only the cells that changed.

        Called on every change and once a second (ages move on): a row whose view is the same
        object as last time and whose ages read the same is not rebuilt at all."""
        self._last_show = (views, now)
        width = self.last_width(self.size.width or 120)
        if width != self._last_width:
            self._last_width = width
            self.columns[LAST[0]].width = width  # type: ignore[index]
            self._shown.clear()
            self._order = []
        order = [v.job for v in views]
        if order != self._order:
            keep = self.selected()
            self.clear()
            for v in views:
                cells = row_cells(v, now, width)
                self.add_row(*cells, key=v.job)
                self._seen[v.job] = (v, age(v.created_at, now), age(v.since, now))
                self._shown[v.job] = [c.plain + str(c.style) for c in cells]
            self._order = order
            if keep in order:
                self.move_cursor(row=order.index(keep), animate=False)
            return
        keys = [k for k, _, _ in COLUMNS] + [LAST[0]]
        for v in views:
            seen = (v, age(v.created_at, now), age(v.since, now))
            last = self._seen.get(v.job)
            if last is not None and last[0] is v and last[1:] == seen[1:]:
                continue
            self._seen[v.job] = seen
            cells = row_cells(v, now, width)
            plain = [c.plain + str(c.style) for c in cells]
            old = self._shown.get(v.job)
            if old == plain:
                continue
            for i, key in enumerate(keys):
                if old is None or old[i] != plain[i]:
                    self.update_cell(v.job, key, cells[i])
            self._shown[v.job] = plain

    def on_resize(self) -> None:
        """The last column follows the table's width at once (the first layout included), not
        at the next change or tick."""
        if self._last_show is not None and self.last_width(self.size.width or 120) != self._last_width:
            self.show(*self._last_show)

    def settled(self) -> bool:
        """Whether the last column is as wide as the table's current width gives it."""
        return self.size.width > 0 and self.last_width(self.size.width) == self._last_width

    def rows_shown(self) -> list[tuple[str, str]]:
        """(job, state cell) top to bottom, as drawn."""
        return [(job, self.get_cell(job, "state").plain) for job in self._order]


class PromptScreen(ModalScreen[str | None]):
    """One line of text: what to send, or a filter."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text)
            yield Input(value=self.value, placeholder=self.placeholder, id="answer")
            yield Label("Enter to confirm, Escape to cancel", classes="hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("y", "answer(True)", "yes"), Binding("n", "answer(False)", "no"),
                Binding("escape", "answer(False)", "no", show=False)]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question)
            yield Label("y: yes   n / Escape: no", classes="hint")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class DiffScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,d", "dismiss_diff", "close")]

    def __init__(self, title: str, diff: str) -> None:
        super().__init__()
        self.title_text = title
        self.diff = diff

    def compose(self) -> ComposeResult:
        with Vertical(id="diff"):
            yield Label(self.title_text, id="diff-title")
            with VerticalScroll():
                yield Static(Syntax(self.diff or "(no changes)", "diff", theme="ansi_dark", word_wrap=False))
            yield Label("Escape / q: close", classes="hint")

    def action_dismiss_diff(self) -> None:
        self.dismiss(None)
