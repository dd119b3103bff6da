"""The CLI's renderers called directly (zen.cli.render and zen.cli.views): JSON and text forms of a
result, where each line goes (stdout or stderr), the figures' formats, and the text of `zen
status` and `zen show` for given data, agent-supplied text kept from driving the terminal."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from zen.cli import render, views
from zen.cli.render import Note, Table, count, emit, headline, jsonable, ms, width


class Colour(Enum):
    red = "red"


@dataclass
class Point:
    x: int
    where: Path


class HasToJson:
    def to_json(self) -> dict[str, Any]:
        return {"kind": Colour.red, "at": Path("/a")}


# -- render -------------------------------------------------------------------------------------

def test_jsonable_makes_plain_data_of_every_kind_of_result() -> None:
    data = {"p": Point(1, Path("/x")), "e": Colour.red, "t": (1, [Path("/y")]), "o": HasToJson(), 3: None}
    assert jsonable(data) == {"p": {"x": 1, "where": "/x"}, "e": "red", "t": [1, ["/y"]],
                              "o": {"kind": "red", "at": "/a"}, "3": None}
    assert jsonable(Point) is Point        # a class is not an instance: left alone


def test_json_output_is_one_document_on_stdout_and_nothing_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    def text(_: Any) -> Any:
        yield Note("banner")
        yield "line"

    emit({"name": "日本", "n": 1}, True, text)
    out, err = capsys.readouterr()
    assert json.loads(out) == {"name": "日本", "n": 1} and "日本" in out   # not \\u-escaped
    assert err == ""


def test_text_output_sends_notes_to_stderr_and_the_rest_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    def text(r: dict[str, Any]) -> Any:
        yield Note("zen: no supervisor is running")
        yield f"count {r['n']}"
        yield Table(["id", "name"], [["a", "x"]])

    emit({"n": 2}, False, text)
    out, err = capsys.readouterr()
    assert err == "zen: no supervisor is running\n"
    assert out == "count 2\nid  name\na   x   \n"          # not a terminal: no bold header


def test_a_table_with_control_characters_in_its_header_and_cells_shows_them_escaped() -> None:
    lines = list(render.table_lines(Table(["n\x1bame"], [["\x1b]0;pwned\x07"]])))
    assert all("\x1b" not in ln and "\x07" not in ln for ln in lines)
    assert lines[1].startswith("\\x1b]0;pwned\\x07")


def test_a_bold_header_is_the_only_escape_a_table_writes() -> None:
    head, row = list(render.table_lines(Table(["id"], [["a"]]), bold=True))
    assert head == "\x1b[1mid\x1b[0m" and row == "a "


@pytest.mark.parametrize(("text", "cells"), [("abc", 3), ("日本", 4), ("e\u0301", 1), ("", 0), ("ｶﾀｶﾅ", 4),
                                             ("🙂", 2)])
def test_width_counts_terminal_cells(text: str, cells: int) -> None:
    assert width(text) == cells


@pytest.mark.parametrize(("n", "shown"), [(0, "0"), (999, "999"), (1234, "1,234"), (999_999, "999,999"),
                                          (1_234_567, "1.23M"), (12_345_678, "12.3M"), (-1234, "-1,234")])
def test_counts_read_at_a_glance(n: float, shown: str) -> None:
    assert count(n) == shown


@pytest.mark.parametrize(("value", "shown"), [(None, "-"), (0, "0 ms"), (340.4, "340 ms"), (1500, "1.5 s"),
                                              (59_999, "60.0 s"), (120_000, "2m"), (7_500_000, "2h05m")])
def test_latencies_in_the_unit_that_fits(value: float | None, shown: str) -> None:
    assert ms(value) == shown


def test_the_headline_adds_up_token_kinds_when_no_total_is_given() -> None:
    f = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 30_000,
         "cache_creation_input_tokens": 5, "cost_usd": 0.0123456, "api_calls": 3, "api_errors": 1}
    assert headline(f) == "31,205 tokens, $0.012346, 3 API calls, 1 errors"
    assert headline({"tokens": 2_000_000}) == "2.00M tokens, $0.000000, 0 API calls, 0 errors"


# -- zen status's text --------------------------------------------------------------------------

def ago(seconds: float) -> str:
    return (datetime.now(UTC) - timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def status(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "supervisor": {"summary": "supervisor: not running", "banner": []},
        "breaker": {"open": False, "automatic_in_window": 0, "window_s": 600.0, "limit": 20},
        "usage": {"api_calls": 0, "tokens": 0}, "pending": [], "jobs": [], "tree": [], "quarantined": []}
    return {**base, **kw}


def job(job_id: str, **kw: Any) -> dict[str, Any]:
    return {"job": job_id, "name": job_id.lower(), "state": "working", "reason": None, "agent": "sim",
            "lane": "app", "created_at": ago(90), "usage": {}, **kw}


def lines_of(s: dict[str, Any]) -> list[Any]:
    return list(views.status_lines(s))


def test_an_empty_home_says_how_to_start(capsys: pytest.CaptureFixture[str]) -> None:
    out = lines_of(status())
    assert out == ["supervisor: not running",
                   "circuit breaker: closed (0 automatic starts in the last 10m, limit 20)",
                   'no tasks or jobs yet (zen dispatch "PROMPT")']


def test_the_banner_goes_to_stderr_and_an_open_breaker_says_work_is_held() -> None:
    s = status(supervisor={"summary": "supervisor: pid 7", "banner": ["zen: the kill switch is engaged"]},
               breaker={"open": True, "automatic_in_window": 21, "window_s": 600.0, "limit": 20})
    out = lines_of(s)
    assert isinstance(out[0], Note) and out[0].text == "zen: the kill switch is engaged"
    assert out[2] == "circuit breaker: OPEN: automatic work is held (21 automatic starts in the last 10m, limit 20)"


def test_usage_is_shown_only_once_there_is_some() -> None:
    assert not any(str(x).startswith("usage:") for x in lines_of(status()))
    out = lines_of(status(usage={"api_calls": 2, "tokens": 1500, "cost_usd": 0.5, "api_errors": 0}))
    assert "usage: 1,500 tokens, $0.500000, 2 API calls, 0 errors (all jobs; zen metrics for more)" in out


def test_pending_tasks_come_first_then_jobs_with_their_reasons() -> None:
    s = status(pending=[{"id": "T1", "name": "later", "agent": "aider", "lane": None, "created_at": ago(30)}],
               jobs=[job("J1", state="failed", reason="preflight"), job("J2")])
    [table] = [x for x in lines_of(s) if isinstance(x, Table)]
    assert table.columns == ["id", "name", "state", "agent", "lane", "age", "cost"]
    assert [r[:5] for r in table.rows] == [["T1", "later", "pending", "aider (unguarded)", ""],
                                           ["J1", "j1", "failed (preflight)", "sim", "app"],
                                           ["J2", "j2", "working", "sim", "app"]]
    assert table.rows[0][5] == "30s" and table.rows[1][5] == "1m" and table.rows[1][6] == "-"


def test_a_runs_on_column_appears_only_when_some_job_runs_elsewhere() -> None:
    local = lines_of(status(jobs=[job("J1", executor="local")]))
    assert "runs on" not in next(x for x in local if isinstance(x, Table)).columns
    s = status(jobs=[job("J1"), job("J2", executor="ray", remote_host="node-3")])
    table = next(x for x in lines_of(s) if isinstance(x, Table))
    assert table.columns[5] == "runs on"
    assert [r[5] for r in table.rows] == ["local", "ray node-3"]


def test_workers_are_drawn_under_the_job_that_spawned_them() -> None:
    tree = [{"id": "P", "children": [{"id": "W1", "children": [{"id": "G", "children": []}]},
                                     {"id": "W2", "children": []}]},
            {"id": "L", "children": []}]
    s = status(jobs=[job(i) for i in ("G", "L", "P", "W1", "W2", "NEW")], tree=tree)
    table = next(x for x in lines_of(s) if isinstance(x, Table))
    assert [r[0] for r in table.rows] == ["P", "├─ W1", "│  └─ G", "└─ W2", "L", "NEW"]


def test_quarantined_entries_are_counted_and_the_last_ten_shown_escaped() -> None:
    entries = [{"file": f"t{i}.yaml", "reason": "not YAML"} for i in range(12)]
    entries[-1]["reason"] = "bad \x1b[2J reason"
    out = [x for x in lines_of(status(quarantined=entries)) if isinstance(x, str)]
    i = out.index("quarantined: 12 spool entries rejected, in spool/quarantine/ (each with a .reason file; "
                  "delete them when read)")
    shown = out[i + 1:]
    assert len(shown) == 10 and shown[0] == "  t2.yaml: not YAML" and shown[-1] == "  t11.yaml: bad \\x1b[2J reason"
    one = list(views.quarantine_lines([{"file": "a", "reason": "b"}]))
    assert one[0].startswith("quarantined: 1 spool entry rejected")


@pytest.mark.parametrize(("ts", "shown"), [(None, "-"), ("", "-"), ("yesterday", "-")])
def test_an_age_that_cannot_be_read_is_a_dash(ts: str | None, shown: str) -> None:
    assert views.age(ts) == shown


def test_an_age_is_a_compact_duration() -> None:
    assert views.age(ago(3 * 3600 + 5 * 60 + 3)) == "3h05m"
    assert views.age(ago(-60)) == "0s"          # a clock ahead of ours is not a negative age


# -- zen show's text ----------------------------------------------------------------------------

def show(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "job": "J1", "task": {"name": "fix-login", "agent": "cmd", "command": ["sh", "-c", "make test"],
                              "lane": "app", "base": "main", "domain": "code", "priority": 2,
                              "prompt": "First line\nsecond line\n"},
        "state": {"state": "working", "reason": None, "worktree": "/w/J1", "branch": "zen/J1",
                  "review_branch": None, "tmux_target": "zen-J1", "exit_code": None},
        "metrics": {}, "events": []}
    return {**base, **kw}


def test_show_lists_the_job_its_place_and_its_prompt_indented() -> None:
    out = list(views.show_lines(show()))
    assert out[:5] == ["job      J1", "name     fix-login", "state    working", "agent    cmd sh -c make test",
                       "lane     app @ main   domain code   priority 2"]
    assert "worktree /w/J1" in out and "branch   zen/J1" in out and "tmux     zen-J1" in out
    assert not any(x.startswith("review") or x.startswith("exit") for x in out)
    assert out[-1] == "prompt   First line\n         second line"


def test_show_names_a_parent_and_workers_and_an_exit_code_of_zero() -> None:
    d = show(parent="P1", workers=["W1", "W2"])
    d["state"]["exit_code"] = 0
    out = list(views.show_lines(d))
    assert "parent   P1" in out and "workers  W1, W2" in out and "exit     0" in out


def test_show_escapes_what_the_agent_and_the_task_supplied() -> None:
    d = show()
    d["task"]["prompt"] = "hi \x1b]52;c;cGF5bG9hZA==\x07"
    d["state"]["reason"] = "died \x1b[31m"
    d["events"] = [{"seq": 3, "ts": "2027-01-01T10:11:12.345Z", "type": "input.sent", "actor": "human",
                    "text": "\x1b[2Jboom", "job": "J1", "v": 1}]
    out = list(views.show_lines(d))
    assert all("\x1b" not in x and "\x07" not in x for x in out)
    assert out[2] == "state    working (died \\x1b[31m)"
    assert out[-1] == "     3 10:11:12.345 input.sent         human      text=\\x1b[2Jboom"


def test_show_reports_usage_and_latency_when_there_are_calls() -> None:
    m = {"api_calls": 4, "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.01, "api_errors": 0,
         "api_latency_ms": {"count": 4, "p50": 800.0, "p95": 2500.0}}
    out = list(views.show_lines(show(metrics=m)))
    assert "usage    120 tokens, $0.010000, 4 API calls, 0 errors" in out
    assert "         API latency p50 800 ms, p95 2.5 s   (zen metrics J1)" in out


def test_an_event_line_leaves_out_the_envelope_and_keeps_the_fields() -> None:
    ev = {"v": 1, "seq": 12, "ts": "2027-01-01T10:11:12.345Z", "job": "J1", "type": "agent.exited",
          "actor": "supervisor", "exit_code": 1, "signal": None, "task": {"big": "x"}}
    assert views.format_event(ev) == "  12 10:11:12.345 agent.exited       supervisor exit_code=1 signal=None"
    assert views.format_event({}) == "   ?  ?"
