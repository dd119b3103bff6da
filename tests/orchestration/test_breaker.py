"""The per-kind circuit breaker on automatic work (zen.orchestration.safety.breaker, DESIGN 13): the
counts in control/breaker.json, when a kind opens and closes, and the zen.yaml errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from tests.helpers import one_line, tune
from zen.errors import ZenError
from zen.orchestration.read.schedule import breaker_status, try_automatic_start
from zen.orchestration.safety import breaker
from zen.store.config import Config
from zen.store.home import Home

T0 = 1_800_000_000.0
WINDOW = 600.0   # breaker.window: 10m in a fresh home
HOLD = 900.0     # breaker.hold: 15m


def setup(home: Path, **limits: int) -> tuple[Home, Config]:
    defaults = {"spawn": 20, "continuation": 60, "recovery": 5, "worker_turn": 120}
    tune(home, **{f"    {k}: {defaults[k]} ": f"    {k}: {v} " for k, v in limits.items()})
    h = Home(home)
    return h, Config.load(h)


def test_a_fresh_home_has_the_documented_default_limits(home: Path) -> None:
    cfg = Config.load(Home(home))
    assert breaker.limits(cfg) == {"spawn": 20, "continuation": 60, "recovery": 5, "worker_turn": 120}


def test_a_home_without_breaker_limits_falls_back_to_the_defaults(home: Path) -> None:
    text = (home / "zen.yaml").read_text()
    start = text.index("  limits:                   # per kind")
    end = text.index("    worker_turn: 120")
    end = text.index("\n", end) + 1
    (home / "zen.yaml").write_text(text[:start] + text[end:])
    assert breaker.limits(Config.load(Home(home))) == breaker.DEFAULT_LIMITS


def test_an_unknown_kind_in_zen_yaml_is_refused_in_one_line_naming_the_kinds(home: Path) -> None:
    tune(home, **{"    spawn: 20 ": "    spawns: 20 "})
    with pytest.raises(ZenError) as exc:
        breaker.limits(Config.load(Home(home)))
    msg = str(exc.value)
    assert one_line(msg)
    assert "breaker.limits.spawns" in msg
    for kind in breaker.KINDS:
        assert kind in msg


def test_a_limit_that_is_not_a_whole_number_is_refused_naming_the_value(home: Path) -> None:
    tune(home, **{"    recovery: 5 ": "    recovery: lots "})
    with pytest.raises(ZenError) as exc:
        breaker.limits(Config.load(Home(home)))
    assert one_line(str(exc.value))
    assert "breaker.limits.recovery" in str(exc.value) and "'lots'" in str(exc.value)


def test_a_kind_opens_when_one_more_would_go_over_its_limit_and_says_until_when(home: Path) -> None:
    h, cfg = setup(home, recovery=3)
    for i in range(3):
        assert breaker.try_kind(h, cfg, breaker.RECOVERY, T0 + i) is None
    assert breaker.try_kind(h, cfg, breaker.RECOVERY, T0 + 3) == T0 + 3 + HOLD
    st = breaker.status(h, cfg, T0 + 4)["recovery"]
    assert st == {"count": 3, "limit": 3, "open": True, "resumes_at": T0 + 3 + HOLD}


def test_work_asked_for_while_open_is_not_counted_and_does_not_extend_the_hold(home: Path) -> None:
    h, cfg = setup(home, spawn=1)
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0) is None
    until = breaker.try_kind(h, cfg, breaker.SPAWN, T0 + 1)
    assert until == T0 + 1 + HOLD
    for dt in (2, 100, HOLD):          # every refusal names the same reopening time
        assert breaker.try_kind(h, cfg, breaker.SPAWN, T0 + dt) == until
    data = json.loads((home / "control" / "breaker.json").read_text())
    assert data["kinds"]["spawn"]["at"] == [T0]


def test_after_the_hold_the_kind_closes_and_old_counts_have_left_the_window(home: Path) -> None:
    h, cfg = setup(home, spawn=2)
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0) is None
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0 + 1) is None
    until = breaker.try_kind(h, cfg, breaker.SPAWN, T0 + 2)
    assert until is not None
    assert breaker.try_kind(h, cfg, breaker.SPAWN, until + 1) is None
    st = breaker.status(h, cfg, until + 1)["spawn"]
    assert st["open"] is False and st["resumes_at"] is None and st["count"] == 1


def test_counts_older_than_the_window_do_not_count(home: Path) -> None:
    h, cfg = setup(home, continuation=2)
    assert breaker.try_kind(h, cfg, breaker.CONTINUATION, T0) is None
    assert breaker.try_kind(h, cfg, breaker.CONTINUATION, T0 + 1) is None
    # the first two have aged out: two more fit although four were asked for in all
    assert breaker.try_kind(h, cfg, breaker.CONTINUATION, T0 + WINDOW + 2) is None
    assert breaker.try_kind(h, cfg, breaker.CONTINUATION, T0 + WINDOW + 3) is None
    assert breaker.status(h, cfg, T0 + WINDOW + 3)["continuation"]["count"] == 2
    assert breaker.try_kind(h, cfg, breaker.CONTINUATION, T0 + WINDOW + 4) is not None


def test_an_event_exactly_a_window_old_still_counts(home: Path) -> None:
    h, cfg = setup(home, worker_turn=1)
    assert breaker.try_kind(h, cfg, breaker.WORKER_TURN, T0) is None
    assert breaker.try_kind(h, cfg, breaker.WORKER_TURN, T0 + WINDOW) is not None


def test_a_limit_of_zero_holds_every_piece_of_that_kind(home: Path) -> None:
    h, cfg = setup(home, worker_turn=0)
    assert breaker.try_kind(h, cfg, breaker.WORKER_TURN, T0) == T0 + HOLD
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0) is None


def test_each_kind_is_counted_apart(home: Path) -> None:
    h, cfg = setup(home, spawn=1, recovery=1)
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0) is None
    assert breaker.try_kind(h, cfg, breaker.RECOVERY, T0) is None
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0 + 1) is not None
    st = breaker.status(h, cfg, T0 + 1)
    assert st["spawn"]["open"] is True and st["recovery"]["open"] is False
    assert st["continuation"] == {"count": 0, "limit": 60, "open": False, "resumes_at": None}


def test_status_of_a_home_that_never_counted_is_all_closed_and_zero(home: Path) -> None:
    h = Home(home)
    st = breaker.status(h, Config.load(h), T0)
    assert set(st) == set(breaker.KINDS)
    assert all(v["count"] == 0 and v["open"] is False for v in st.values())
    assert not (home / "control" / "breaker.json").exists()   # reading writes nothing


@pytest.mark.parametrize("garbage", ["", "{not json", "[1, 2, 3]", '"a string"', '{"kinds": [1]}',
                                     '{"kinds": {"spawn": 7}}'])
def test_an_unreadable_breaker_file_reads_as_empty_and_is_rewritten_whole(home: Path, garbage: str) -> None:
    h, cfg = setup(home, spawn=1)
    path = home / "control" / "breaker.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(garbage)
    assert breaker.status(h, cfg, T0)["spawn"]["count"] == 0
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0) is None
    data = json.loads(path.read_text())
    assert data["v"] == 1 and data["kinds"]["spawn"] == {"at": [T0], "open_until": None}


def test_the_file_is_one_json_line_readable_with_cat(home: Path) -> None:
    h, cfg = setup(home)
    breaker.try_kind(h, cfg, breaker.SPAWN, T0)
    text = (home / "control" / "breaker.json").read_text()
    assert text.endswith("\n") and text.count("\n") == 1
    assert json.loads(text)["kinds"]["spawn"]["at"] == [T0]


def test_the_schedulers_automatic_starts_and_the_kinds_share_the_file_without_losing_each_other(home: Path) -> None:
    h, cfg = setup(home, spawn=5)
    assert try_automatic_start(h, cfg, T0)
    assert breaker.try_kind(h, cfg, breaker.SPAWN, T0 + 1) is None
    assert try_automatic_start(h, cfg, T0 + 2)
    assert breaker.try_kind(h, cfg, breaker.RECOVERY, T0 + 3) is None
    data = json.loads((home / "control" / "breaker.json").read_text())
    assert data["automatic_starts"] == [T0, T0 + 2]
    assert data["kinds"]["spawn"]["at"] == [T0 + 1] and data["kinds"]["recovery"]["at"] == [T0 + 3]
    shown = breaker_status(h, T0 + 4)
    assert shown["automatic_in_window"] == 2 and shown["kinds"]["spawn"]["count"] == 1


def test_concurrent_callers_never_let_more_than_the_limit_through(home: Path) -> None:
    h, cfg = setup(home, spawn=7)
    results: list[float | None] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        for j in range(5):
            got = breaker.try_kind(h, cfg, breaker.SPAWN, T0 + i * 0.001 + j * 0.0001)
            with lock:
                results.append(got)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 30
    assert sum(1 for r in results if r is None) == 7
    assert breaker.status(h, cfg, T0 + 1)["spawn"]["count"] == 7
