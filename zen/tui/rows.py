"""The watch's model: one `JobView` per job (or pending task), their order and filters. Pure.

Both faces of `zen watch` (the Textual app and `--plain`) and the tmux status segment show
these rows, so what "needs you" means, what comes first and how a row reads are decided here once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from zen.core.durations import format_duration
from zen.core.ids import epoch_of
from zen.core.jobstate import ENDED, LIVE

# state views the `v` key cycles through (label, states it shows; None = needs you)
VIEWS: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("all", ()), ("needs you", None), ("live", LIVE), ("queued", ("pending", "queued")), ("ended", ENDED))


@dataclass(frozen=True)
class JobView:
    job: str
    name: str
    state: str                      # a job state, or "pending" for a task still in the spool
    reason: str | None = None
    agent: str = ""
    lane: str = ""
    created_at: str | None = None
    since: str | None = None        # when the job entered its current state
    last_line: str = ""
    tokens: int | None = None       # None: no usage figures for this job (yet)
    cost_usd: float | None = None
    approvals: int = 0              # guardian approvals pending for this job
    tmux_session: str | None = None
    worktree: str | None = None
    review_branch: str | None = None
    base_commit: str | None = None
    exit_code: int | None = None
    seq: int = 0
    anomalies: int = 0              # anomaly.flagged findings (issue 38); the latest's message below
    anomaly: str | None = None

    @property
    def needs_you(self) -> bool:
        """Waiting for a human: at its prompt, asking, or held on an approval."""
        return self.state == "waiting" or (self.state in LIVE and self.approvals > 0)

    @property
    def live(self) -> bool:
        return self.state in LIVE

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    def state_text(self) -> str:
        flag = " · anomaly" if self.anomalies == 1 else f" · {self.anomalies} anomalies" if self.anomalies else ""
        if self.approvals and self.state in LIVE:
            return f"{self.state} (approval pending){flag}"
        return (f"{self.state} ({self.reason})" if self.reason and self.state in ("waiting", "queued")
                else self.state) + flag

    def detail(self) -> str:
        """The last column: why a job failed, else the last line its agent printed."""
        if self.state == "failed" and self.reason:
            return self.reason
        return self.last_line

    def with_line(self, line: str) -> JobView:
        return replace(self, last_line=line)




def order_key(v: JobView) -> tuple[int, float, str]:
    """Needs you first (longest waiting first), then live, then queued, then ended (newest first)."""
    since = epoch_of(v.since) or epoch_of(v.created_at) or 0.0
    created = epoch_of(v.created_at) or 0.0
    if v.needs_you:
        return 0, since, v.job
    if v.live:
        return 1, created, v.job
    if v.state in ("pending", "queued"):
        return 2, created, v.job
    return 3, -since, v.job


def ordered(rows: Iterable[JobView]) -> list[JobView]:
    return sorted(rows, key=order_key)


@dataclass(frozen=True)
class Filter:
    lane: str | None = None
    view: int = 0                   # index into VIEWS
    text: str = ""                  # words that must all appear (name, job, lane, agent, state, or key:value)
    lanes: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        parts = []
        if self.lane:
            parts.append(f"lane {self.lane}")
        if self.view:
            parts.append(VIEWS[self.view][0])
        if self.text:
            parts.append(f"“{self.text}”")
        return ", ".join(parts) if parts else "all jobs"

    def keeps(self, v: JobView) -> bool:
        if self.lane and v.lane != self.lane:
            return False
        _, states = VIEWS[self.view]
        if states is None and not v.needs_you:
            return False
        if states and v.state not in states:
            return False
        return all(_matches(v, word) for word in self.text.lower().split())


def _matches(v: JobView, word: str) -> bool:
    key, sep, value = word.partition(":")
    if sep:
        fields = {"lane": v.lane, "state": v.state, "agent": v.agent, "name": v.name, "job": v.job,
                  "reason": v.reason or ""}
        if key in fields:
            return fields[key].lower().startswith(value)
    hay = " ".join([v.name, v.job, v.lane, v.agent, v.state, v.reason or ""]).lower()
    return word in hay


def apply_filter(rows: Iterable[JobView], f: Filter) -> list[JobView]:
    return [v for v in ordered(rows) if f.keeps(v)]


# -- how cells read ------------------------------------------------------------------------------

def age(ts: str | None, now: datetime) -> str:
    t = epoch_of(ts)
    return "-" if t is None else format_duration(now.timestamp() - t)


def tokens_text(v: JobView) -> str:
    if v.tokens is None:
        return "—"
    n = v.tokens
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def cost_text(v: JobView) -> str:
    return "—" if v.cost_usd is None else f"${v.cost_usd:.2f}"


@dataclass(frozen=True)
class Counts:
    working: int = 0
    needs_you: int = 0
    queued: int = 0
    ended: int = 0


def counts(rows: Iterable[JobView]) -> Counts:
    working = needs = queued = ended = 0
    for v in rows:
        if v.needs_you:
            needs += 1
        elif v.live:
            working += 1
        elif v.state in ("pending", "queued"):
            queued += 1
        else:
            ended += 1
    return Counts(working, needs, queued, ended)


def segment(c: Counts, *, kill: bool = False) -> str:
    """The tmux status segment: "3 working · 1 needs you" (queued only when some are)."""
    parts = []
    if kill:
        parts.append("KILL")
    parts.append(f"{c.working} working")
    if c.needs_you:
        parts.append(f"{c.needs_you} need{'s' if c.needs_you == 1 else ''} you")
    if c.queued:
        parts.append(f"{c.queued} queued")
    return " · ".join(parts)
