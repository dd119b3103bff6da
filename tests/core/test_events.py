"""The event catalogue: every type known with its fields, lines validated, one time format."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.helpers import REPO_ROOT
from zen.core import events as cat
from zen.core import states
from zen.core.events import FORMAT_VERSION, EventType, validate
from zen.core.ids import iso
from zen.core.model import Task
from zen.store import events as ev_store
from zen.store.jobs import JobStore
from zen.store.layout import Home

E = EventType
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def line(etype: str, **fields: object) -> dict[str, object]:
    return {"v": 1, "seq": 1, "ts": "2026-11-29T10:15:02.456Z", "job": "j", "type": etype,
            "actor": "supervisor", **fields}


def test_every_type_has_a_catalogue_entry_and_the_design_types_are_there() -> None:
    for t in EventType:
        assert t in cat.JOB_EVENTS or t in cat.HOME_EVENTS, t
    for spec in [*cat.JOB_EVENTS.values(), *cat.HOME_EVENTS.values()]:
        assert spec.doc and spec.type.value == str(spec.type)
        names = [f.name for f in spec.fields]
        assert len(names) == len(set(names)), spec
    # the types DESIGN section 2 lists, and the second half's (sections 10-13), never renamed
    for name in ("task.received", "job.queued", "preflight.passed", "preflight.failed", "worktree.created",
                 "agent.spawned", "turn.working", "turn.waiting", "input.sent", "guard.allowed",
                 "guard.denied", "approval.requested", "approval.granted", "approval.denied", "usage",
                 "files.changed", "lock.acquired", "lock.released", "lock.conflict", "agent.exited",
                 "job.timeout", "job.cancelled", "retry.scheduled", "harvest.done", "harvest.failed",
                 "job.failed", "killswitch.engaged", "killswitch.released", "coord.overlap",
                 "coord.conflict", "base.moved", "job.paused", "job.resumed", "job.landed",
                 "task.rejected", "spawn.intent"):
        assert cat.spec(name) is not None or cat.spec(name, home=True) is not None, name


def test_reserved_types_are_not_written_by_zen_yet_and_written_ones_are_marked_emitted() -> None:
    """A type marked emitted=False must not be appended anywhere in zen/; flip the flag (and
    keep its fields right) when the code that writes it lands."""
    source = "\n".join(p.read_text() for p in (REPO_ROOT / "zen").rglob("*.py")
                       if p.name != "events.py" or p.parent.name != "core")
    used = set(re.findall(r"\b(?:E|EventType)\.([A-Z_]+)\b", source))
    reserved = {s.type.name for s in [*cat.JOB_EVENTS.values(), *cat.HOME_EVENTS.values()] if not s.emitted}
    # `output` is reserved but read by the state machine; nothing else reserved may be named
    assert used & reserved <= {"OUTPUT"}, used & reserved
    assert {"AGENT_SPAWNED", "TURN_WAITING", "HARVEST_DONE", "GUARD_DENIED"} <= used


def test_no_event_type_is_spelled_as_a_string_outside_the_catalogue() -> None:
    values = {t.value for t in EventType if "." in t.value}
    found = []
    for p in (REPO_ROOT / "zen").rglob("*.py"):
        if p == REPO_ROOT / "zen" / "core" / "events.py":
            continue
        for m in re.finditer(r"[\"']([a-z]+\.[a-z_]+)[\"']", p.read_text()):
            if m.group(1) in values:
                found.append(f"{p.relative_to(REPO_ROOT)}: {m.group(0)}")
    assert not found, found


def test_a_well_formed_line_of_every_emitted_type_validates() -> None:
    samples = {str: "x", int: 3, float: 1.5, bool: True, list: [], dict: {}, type(None): None}
    for spec in cat.JOB_EVENTS.values():
        ev = line(spec.type, **{f.name: samples[f.kinds[0]] for f in spec.fields})
        assert validate(ev) == [], spec
        required_only = line(spec.type, **{f.name: samples[f.kinds[0]] for f in spec.fields if f.required})
        assert validate(required_only) == [], spec


def test_unknown_types_missing_and_wrong_typed_fields_are_reported() -> None:
    assert validate(line("turn.waiting", reason="idle")) == []
    assert validate(line("no.such.type")) == ["unknown event type 'no.such.type'"]
    assert validate(line("turn.waiting")) == ["turn.waiting: missing field 'reason'"]
    assert validate(line("turn.waiting", reason=3)) == ["turn.waiting: field 'reason' is int, not str"]
    # a bool is not a number, a float is not an int, null only where allowed
    assert validate(line("job.timeout", after_s=True)) == ["job.timeout: field 'after_s' is bool, not int or float"]
    assert validate(line("job.timeout", after_s=2)) == []
    assert validate(line("agent.exited", exit_code=None, signal=9)) == []
    assert validate(line("agent.exited", exit_code=1.5, signal=None)) == [
        "agent.exited: field 'exit_code' is float, not int or null"]
    assert validate(line("job.failed", reason=None)) == ["job.failed: field 'reason' is null, not str"]
    # extra fields are allowed: readers keep what they do not know
    assert validate(line("job.failed", reason="x", extra={"a": 1})) == []


def test_the_envelope_is_checked_too() -> None:
    ev = line("job.failed", reason="x")
    del ev["seq"]
    ev["ts"] = 5
    assert validate(ev) == ["job.failed: missing field 'seq'", "job.failed: field 'ts' is int, not str"]
    assert validate([1, 2]) == ["the line is not a JSON object"]
    assert validate({**line("job.failed", reason="x"), "v": FORMAT_VERSION + 1}) == [
        f"format version {FORMAT_VERSION + 1} is newer than this zen reads ({FORMAT_VERSION})"]
    bad_type = {**line("job.failed", reason="x"), "type": 7}
    assert validate(bad_type) == ["7: field 'type' is int, not str"]


def test_home_log_lines_use_their_own_catalogue() -> None:
    ok = cat.home_event(E.SUPERVISOR_STARTED, {"pid": 12})
    assert validate(ok, home=True) == []
    assert list(ok)[:3] == ["v", "ts", "type"] and ok["v"] == FORMAT_VERSION and TS.match(ok["ts"])
    # supervisor.started is not a job event; turn.waiting is not a home event
    assert validate({**ok, "seq": 1, "job": "j", "actor": "x"}) == ["unknown event type 'supervisor.started'"]
    assert validate({"v": 1, "ts": "t", "type": "turn.waiting"}, home=True) == [
        "unknown event type 'turn.waiting'"]
    assert validate({"v": 1, "ts": "t", "type": "supervisor.stopped"}, home=True) == [
        "supervisor.stopped: missing field 'pid'"]


def test_job_event_writes_the_envelope_in_order_from_the_constant() -> None:
    ev = cat.job_event(4, "j1", E.TURN_WAITING, cat.Actor.HOOK, {"reason": "idle"})
    assert list(ev) == ["v", "seq", "ts", "job", "type", "actor", "reason"]
    assert ev["v"] == FORMAT_VERSION and ev["seq"] == 4 and TS.match(ev["ts"])
    # the StrEnum serialises as its plain value: the bytes on disk stay as they were
    text = json.dumps(ev, separators=(",", ":"))
    assert '"type":"turn.waiting","actor":"hook"' in text


def test_one_time_format_for_epoch_seconds_and_datetimes() -> None:
    assert cat.timestamp(0) == "1970-01-01T00:00:00.000Z"
    assert cat.timestamp(1764583502.4567) == "2025-12-01T10:05:02.456Z"
    dt = datetime(2026, 11, 29, 10, 15, 2, 456789, tzinfo=UTC)
    assert iso(dt) == "2026-11-29T10:15:02.456Z" == cat.timestamp(dt.timestamp())
    now = cat.timestamp()
    assert TS.match(now)
    assert abs(datetime.fromisoformat(now.replace("Z", "+00:00")).timestamp() - time.time()) < 5


def test_every_line_a_job_record_writes_validates(tmp_path: Path) -> None:
    home = Home(tmp_path)
    (tmp_path / "jobs").mkdir()
    store = JobStore(home)
    task = Task(id="20261129T101500Z-fix-1234", name="fix", prompt="fix it", lane="app",
                created_at="2026-11-29T10:15:00.000Z")
    assert store.create(task)
    store.append(task.id, E.TURN_WAITING, reason="question", by="activity")
    store.append(task.id, E.AGENT_EXITED, exit_code=0, signal=None)
    lines = (tmp_path / "jobs" / task.id / "events.jsonl").read_text().splitlines()
    assert [json.loads(x)["type"] for x in lines] == ["task.received", "job.queued", "turn.waiting", "agent.exited"]
    for raw in lines:
        assert validate(json.loads(raw)) == [], raw


def test_the_state_machine_reads_catalogue_names_and_plain_strings_alike() -> None:
    evs = [line("task.received", seq=1, task={"name": "a", "agent": "sim"}),
           line(E.WORKTREE_CREATED, seq=2, path="/w", branch="zen/a", base_commit="abc"),
           line("agent.spawned", seq=3, session="s", target="%1"),
           line(E.TURN_WAITING, seq=4, reason="question"),
           line("guard.denied", seq=5, decision="deny", rule="r", reason="x", tool="Bash"),
           line(E.AGENT_EXITED, seq=6, exit_code=3, signal=None)]
    snap = states.replay("j", evs)
    assert (snap.state.value, snap.exit_code, snap.turns, snap.guard) == ("exited", 3, 1, {"denied": 1})
    assert snap.worktree == "/w" and snap.tmux_target == "%1" and snap.name == "a"


def test_home_wide_control_lines_carry_the_version(tmp_path: Path) -> None:
    home = Home(tmp_path)
    ev_store.append_control(home, E.SUPERVISOR_STARTED, pid=7)
    ev_store.append_control(home, E.SUPERVISOR_STOPPED, pid=7, live_agents=0, why="once")
    recs = [json.loads(x) for x in (tmp_path / "logs" / "control.jsonl").read_text().splitlines()]
    assert [r["type"] for r in recs] == ["supervisor.started", "supervisor.stopped"]
    assert all(validate(r, home=True) == [] for r in recs)
