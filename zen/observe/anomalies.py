"""Anomalies in what agents do, against the fleet's own history (issue 38). Pure: no I/O.

    fold_turns(job, events) -> [Turn]                 a job's timeline as turns (TurnFold: event by event)
    baselines(turns) -> {group: {metric: Baseline}}   per agent and lane, median and MAD
    detect(job_turns, base, only_last=False) -> [Finding]

Baselines are robust statistics, no model: for each (agent, lane) group and metric the median and
the median absolute deviation (MAD) of its closed turns, in log space (cost, tokens, counts and
durations are skewed: a turn 3x the usual is as far above as one a third of it is below). A turn is
flagged on a metric when it is more than Z_FLAG robust deviations (MAD x 1.4826) above the median
and over the metric's absolute floor; a group needs MIN_TURNS turns before its baseline speaks.
Metrics: cost and tokens per turn, tool calls per turn, files touched, turn length, and guard
denials per hour (per job and clock hour).

Patterns, which need no baseline: a tool loop (the same call LOOP_RUN times in a row, or the same command
LOOP_COUNT times in one turn), a deny burst (DENY_BURST denials within DENY_WINDOW_S), a cost spike against
the job's own trend (a turn SPIKE_X times the median of the job's earlier turns), edit churn
(CHURN_EDITS writes of one file in one turn). An open turn (still running) is judged too, so a loop
is flagged while it runs, within the turn it starts in.

Each finding names the metric or pattern, the value, the baseline (median, MAD, turns) and how far
from it, and the evidence: the timeline seqs that show it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zen.core.events import EventType as E
from zen.core.ids import parse_iso

STARTS = frozenset(str(t) for t in (E.AGENT_SPAWNED, E.TURN_WORKING, E.INPUT_SENT))
ENDS = frozenset(str(t) for t in (E.TURN_WAITING, E.AGENT_EXITED, E.JOB_CANCELLED, E.JOB_FAILED))
GUARD = frozenset(str(t) for t in (E.GUARD_ALLOWED, E.GUARD_DENIED))
TASK, USAGE, DENIED = str(E.TASK_RECEIVED), str(E.USAGE), str(E.GUARD_DENIED)
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")

MIN_TURNS = 30
Z_FLAG = 5.5
MAD_SCALE = 1.4826
# metric -> (absolute floor a flagged value must reach, the smallest spread in log space)
METRICS: dict[str, tuple[float, float]] = {
    "cost_usd": (0.05, 0.25), "tokens": (20000.0, 0.25), "tool_calls": (15.0, 0.3),
    "files_touched": (8.0, 0.3), "turn_s": (300.0, 0.3), "denials_per_hour": (8.0, 0.5)}
LOOP_RUN = 6
LOOP_COUNT = 15
DENY_BURST = 5
DENY_WINDOW_S = 120.0
SPIKE_X = 6.0
SPIKE_MIN_TURNS = 3
SPIKE_FLOOR_USD = 0.05
CHURN_EDITS = 10


@dataclass
class Turn:
    job: str
    n: int                        # from 1, in the job
    start_seq: int
    start_ts: str
    group: tuple[str, str]        # (agent, lane)
    end_seq: int | None = None
    end_ts: str | None = None
    cost_usd: float = 0.0
    tokens: float = 0.0
    calls: list[tuple[int, str]] = field(default_factory=list)        # (seq, tool + what)
    denials: list[tuple[int, str]] = field(default_factory=list)      # (seq, ts)
    edits: list[tuple[int, str]] = field(default_factory=list)        # (seq, file path)
    last_ts: str = ""

    @property
    def closed(self) -> bool:
        return self.end_seq is not None

    def metric(self, name: str) -> float:
        if name == "cost_usd":
            return self.cost_usd
        if name == "tokens":
            return self.tokens
        if name == "tool_calls":
            return float(len(self.calls))
        if name == "files_touched":
            return float(len({p for _, p in self.edits}))
        if name == "turn_s":
            return _seconds(self.start_ts, self.end_ts or self.last_ts)
        raise KeyError(name)


@dataclass(frozen=True)
class Baseline:
    median: float        # of log1p(value)
    mad: float           # of log1p(value), unscaled
    turns: int

    @property
    def typical(self) -> float:
        return math.expm1(self.median)

    def score(self, value: float, min_spread: float) -> float:
        spread = max(self.mad * MAD_SCALE, min_spread)
        return (math.log1p(max(value, 0.0)) - self.median) / spread


@dataclass(frozen=True)
class Finding:
    job: str
    kind: str            # "baseline" | "pattern"
    what: str            # the metric, or tool_loop | deny_burst | cost_spike | edit_churn
    value: float
    typical: float | None
    score: float | None  # robust deviations above the median (baseline), or value / threshold
    evidence: list[int]
    turn: int
    turn_seq: int
    message: str

    @property
    def key(self) -> str:
        """What makes a finding the same one again: its job, what, and turn (or hour)."""
        return f"{self.what}@{self.turn_seq}"

    def as_dict(self) -> dict[str, Any]:
        return {"job": self.job, "kind": self.kind, "what": self.what, "value": round(self.value, 6),
                "typical": None if self.typical is None else round(self.typical, 6),
                "score": None if self.score is None else round(self.score, 2), "evidence": self.evidence,
                "turn": self.turn, "turn_seq": self.turn_seq, "key": self.key, "message": self.message}


def _seconds(a: str, b: str | None) -> float:
    try:
        return max(0.0, (parse_iso(str(b)) - parse_iso(a)).total_seconds())
    except (TypeError, ValueError):
        return 0.0


def _num(v: Any) -> float:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0.0


def _call_key(ev: Mapping[str, Any]) -> str:
    return f"{ev.get('tool')}:{ev.get('command') or ev.get('file_path') or ''}"


class TurnFold:
    """A job's timeline folded into turns, event by event (the live watch keeps one per job and
    feeds it each batch of new events); `turns[-1]` may be open."""

    def __init__(self, job: str, group: tuple[str, str] | None = None) -> None:
        self.job = job
        self.turns: list[Turn] = []
        self.seq = 0                  # the last seq folded
        self._fixed = group is not None
        self.group = group or ("", "")
        self._cur: Turn | None = None

    def apply(self, ev: Mapping[str, Any]) -> None:
        etype = str(ev.get("type") or "")
        seq = int(ev["seq"]) if type(ev.get("seq")) is int else self.seq
        self.seq = max(self.seq, seq)
        ts = str(ev.get("ts") or "")
        if etype == TASK and not self._fixed and isinstance(ev.get("task"), Mapping):
            self.group = (str(ev["task"].get("agent") or ""), str(ev["task"].get("lane") or ev["task"].get("repo") or ""))
        cur = self._cur
        if cur is None and (etype in STARTS or etype in GUARD or etype == USAGE):
            cur = self._cur = Turn(self.job, len(self.turns) + 1, seq, ts, self.group)
            self.turns.append(cur)
        if cur is None:
            return
        cur.last_ts = ts or cur.last_ts
        if etype == USAGE:
            cur.cost_usd += _num(ev.get("cost_usd"))
            cur.tokens += sum(_num(ev.get(k)) for k in TOKEN_FIELDS)
        elif etype in GUARD:
            cur.calls.append((seq, _call_key(ev)))
            if etype == DENIED:
                cur.denials.append((seq, ts))
            elif ev.get("tool") in FILE_TOOLS and ev.get("file_path"):
                cur.edits.append((seq, str(ev["file_path"])))
        elif etype in ENDS:
            cur.end_seq, cur.end_ts = seq, ts
            self._cur = None


def fold_turns(job: str, events: Iterable[Mapping[str, Any]], group: tuple[str, str] | None = None) -> list[Turn]:
    """The job's turns in order; the last may be open. Events before any turn start one."""
    fold = TurnFold(job, group)
    for ev in events:
        fold.apply(ev)
    return fold.turns


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def robust(values: list[float]) -> Baseline:
    logs = [math.log1p(max(v, 0.0)) for v in values]
    med = _median(logs)
    return Baseline(med, _median([abs(x - med) for x in logs]), len(values))


def hourly_denials(turns: Iterable[Turn]) -> dict[str, list[tuple[int, str]]]:
    """Denials per clock hour (ISO 'YYYY-MM-DDTHH') of one job's turns."""
    out: dict[str, list[tuple[int, str]]] = {}
    for t in turns:
        for seq, ts in t.denials:
            out.setdefault(ts[:13], []).append((seq, ts))
    return out


def baselines(job_turns: Mapping[str, list[Turn]]) -> dict[tuple[str, str], dict[str, Baseline]]:
    """Per (agent, lane): each metric's median and MAD over the group's closed turns (denials per
    hour over the hours its jobs worked)."""
    values: dict[tuple[str, str], dict[str, list[float]]] = {}
    for turns in job_turns.values():
        closed = [t for t in turns if t.closed]
        if not closed:
            continue
        group = values.setdefault(closed[0].group, {m: [] for m in METRICS})
        for t in closed:
            for m in METRICS:
                if m != "denials_per_hour":
                    group[m].append(t.metric(m))
        hours = {t.start_ts[:13] for t in closed} | set(hourly_denials(closed))
        by_hour = hourly_denials(closed)
        group["denials_per_hour"].extend(float(len(by_hour.get(h, []))) for h in hours)
    return {g: {m: robust(v) for m, v in ms.items() if len(v) >= MIN_TURNS} for g, ms in values.items()}


def _patterns(t: Turn, earlier: list[Turn]) -> Iterable[Finding]:
    # a tool loop: the same call again and again
    run_start, best = 0, (0, 0)
    for i in range(1, len(t.calls) + 1):
        if i == len(t.calls) or t.calls[i][1] != t.calls[run_start][1]:
            if i - run_start > best[1] - best[0]:
                best = (run_start, i)
            run_start = i
    counts: dict[str, list[int]] = {}
    for seq, key in t.calls:
        if key.split(":", 1)[0] not in FILE_TOOLS:   # edits of one file apart: edit churn, below
            counts.setdefault(key, []).append(seq)
    top = max(counts.items(), key=lambda kv: len(kv[1]), default=("", []))
    if best[1] - best[0] >= LOOP_RUN or len(top[1]) >= LOOP_COUNT:
        if best[1] - best[0] >= LOOP_RUN:
            key, seqs = t.calls[best[0]][1], [s for s, _ in t.calls[best[0]:best[1]]]
        else:
            key, seqs = top
        yield Finding(t.job, "pattern", "tool_loop", float(len(seqs)), None, len(seqs) / LOOP_RUN, seqs, t.n,
                      t.start_seq, f"the same call {len(seqs)} times in turn {t.n}: {key[:120]}")
    # a deny burst
    for i in range(len(t.denials) - DENY_BURST + 1):
        window = t.denials[i:i + DENY_BURST]
        if _seconds(window[0][1], window[-1][1]) <= DENY_WINDOW_S:
            seqs = [s for s, _ in t.denials[i:]]
            yield Finding(t.job, "pattern", "deny_burst", float(len(seqs)), None, len(seqs) / DENY_BURST, seqs,
                          t.n, t.start_seq, f"{len(seqs)} guard denials within {DENY_WINDOW_S:.0f} s in turn {t.n}")
            break
    # edit churn on one file
    per_file: dict[str, list[int]] = {}
    for seq, path in t.edits:
        per_file.setdefault(path, []).append(seq)
    churn = max(per_file.items(), key=lambda kv: len(kv[1]), default=("", []))
    if len(churn[1]) >= CHURN_EDITS:
        yield Finding(t.job, "pattern", "edit_churn", float(len(churn[1])), None, len(churn[1]) / CHURN_EDITS,
                      churn[1], t.n, t.start_seq, f"{churn[0]} written {len(churn[1])} times in turn {t.n}")
    # a cost spike against the job's own trend
    costs = [e.cost_usd for e in earlier if e.closed and e.cost_usd > 0]
    if len(costs) >= SPIKE_MIN_TURNS and t.cost_usd >= SPIKE_FLOOR_USD:
        own = _median(costs)
        if t.cost_usd >= SPIKE_X * own:
            yield Finding(t.job, "pattern", "cost_spike", t.cost_usd, own, t.cost_usd / own, [t.start_seq], t.n,
                          t.start_seq, f"turn {t.n} cost ${t.cost_usd:.4f}, {t.cost_usd / own:.1f}x this job's "
                          f"median turn (${own:.4f})")


def _against(t: Turn, base: Mapping[str, Baseline]) -> Iterable[Finding]:
    for m, (floor, spread) in METRICS.items():
        b = base.get(m)
        if b is None or m == "denials_per_hour":
            continue
        value = t.metric(m)
        if value < floor:
            continue
        z = b.score(value, spread)
        if z >= Z_FLAG:
            yield Finding(t.job, "baseline", m, value, b.typical, z, [t.start_seq], t.n, t.start_seq,
                          f"{m} {value:g} in turn {t.n}, {z:.1f} robust deviations above the usual "
                          f"{b.typical:g} of {b.turns} turns of {'/'.join(x or '-' for x in t.group)}")


def _hours(job: str, turns: list[Turn], base: Mapping[str, Baseline], last_hour: str | None) -> Iterable[Finding]:
    b = base.get("denials_per_hour")
    if b is None:
        return
    floor, spread = METRICS["denials_per_hour"]
    for hour, denials in hourly_denials(turns).items():
        if last_hour is not None and hour != last_hour:
            continue
        z = b.score(float(len(denials)), spread)
        if len(denials) >= floor and z >= Z_FLAG:
            seqs = [s for s, _ in denials]
            turn = next((t for t in turns if t.denials and t.denials[0][0] <= seqs[0]), turns[0])
            yield Finding(job, "baseline", "denials_per_hour", float(len(denials)), b.typical, z, seqs, turn.n,
                          seqs[0], f"{len(denials)} guard denials in the hour {hour}:00, {z:.1f} robust "
                          f"deviations above the usual {b.typical:g}")


def detect(job_turns: Mapping[str, list[Turn]], base: Mapping[tuple[str, str], Mapping[str, Baseline]],
           *, only_last: bool = False) -> list[Finding]:
    """Every finding in the jobs' turns (`only_last`: in each job's last turn and hour only, as
    the live watch asks)."""
    out: list[Finding] = []
    for job, turns in job_turns.items():
        if not turns:
            continue
        group = base.get(turns[0].group, {})
        judged = turns[-1:] if only_last else turns
        for t in judged:
            earlier = turns[:t.n - 1]
            out.extend(_patterns(t, earlier))
            out.extend(_against(t, group))
        last_hour = turns[-1].last_ts[:13] if only_last else None
        out.extend(_hours(job, turns, group, last_hour))
    return out
