"""`zen watch` driven headless through Textual's Pilot, on real homes: a fixed scene written into
the documented files, and real `sim` agents under a real supervisor."""

from __future__ import annotations

import pytest

pytest.importorskip("textual", reason="textual is not installed (make install installs it)")

import asyncio
from pathlib import Path

from tests.supervisor.util import dispatch_sim, snap, wait_state
from tests.tui import scene
from tests.tui.conftest import Supervisors
from tests.tui.pilot import select, shown, until
from zen.store.home import Home
from zen.tui.app import WatchApp


def names(app: WatchApp) -> list[str]:
    return [app.rows[j].name for j, _ in shown(app)]


def test_the_view_lists_every_job_of_the_home_with_its_state_who_needs_you_first() -> None:
    home = scene.build(Path.home() / "zen")

    async def run() -> None:
        app = scene.app_for(home)
        async with app.run_test(size=scene.SIZE) as pilot:
            await until(pilot, lambda: len(shown(app)) == 8, message="8 rows")
            rows = {app.rows[j].name: cell for j, cell in shown(app)}
            assert rows == {
                "upgrade-deps": "❯ waiting (approval)", "fix-login": "❯ waiting (question)",
                "add-rate-limit": "▶ working", "docs-typos": "▶ working", "flaky-ci": "· queued",
                "bump-version": "· pending", "refactor-db": "✓ harvested", "try-rm": "✗ failed"}
            # the two that need you on top, the one waiting longest first; then live, queued, ended
            assert names(app) == ["upgrade-deps", "fix-login", "add-rate-limit", "docs-typos", "flaky-ci",
                                  "bump-version", "refactor-db", "try-rm"]
            fix = next(v for v in app.rows.values() if v.name == "fix-login")
            cells = [app.table.get_cell(fix.job, key).plain for key in ("age", "for", "tokens", "cost", "last")]
            assert cells[:4] == ["14m", "48s", "48k", "$0.41"]
            assert cells[4].startswith("Should I also add a regression test") and cells[4].endswith("…")
            assert fix.last_line == "Should I also add a regression test for emails with a plus sign?"
            docs = next(v for v in app.rows.values() if v.name == "docs-typos")
            assert [app.table.get_cell(docs.job, k).plain for k in ("tokens", "cost")] == ["—", "—"]
            summary = str(app.query_one("#summary").render())
            assert summary.startswith("2 working · 2 need you · 2 queued · 2 ended")
            banner = str(app.query_one("#banner").render())
            assert "~/zen" in banner and "supervisor NOT running" in banner

    asyncio.run(run())


def test_filters_by_lane_by_state_and_by_words() -> None:
    home = scene.build(Path.home() / "zen")

    async def run() -> None:
        app = scene.app_for(home)
        async with app.run_test(size=scene.SIZE) as pilot:
            await until(pilot, lambda: len(shown(app)) == 8, message="8 rows")
            await pilot.press("l")  # lanes cycle: all -> api -> app -> docs -> all
            assert names(app) == ["add-rate-limit", "flaky-ci", "refactor-db"]
            await pilot.press("l")
            assert names(app) == ["upgrade-deps", "fix-login", "bump-version", "try-rm"]
            await pilot.press("l", "l")
            assert len(shown(app)) == 8
            await pilot.press("v")  # views cycle: all -> needs you -> live -> queued -> ended
            assert names(app) == ["upgrade-deps", "fix-login"]
            await pilot.press("v", "v", "v")
            assert names(app) == ["refactor-db", "try-rm"]
            await pilot.press("escape")
            await pilot.press("slash")
            await pilot.press(*"agent:claude", "enter")
            assert names(app) == ["fix-login", "bump-version", "refactor-db"]
            assert "“agent:claude”" in str(app.query_one("#summary").render())
            await pilot.press("slash", "ctrl+u", *"nothing-like-this", "enter")
            assert shown(app) == []
            assert "no job matches" in str(app.query_one("#empty").render())
            await pilot.press("escape")
            assert len(shown(app)) == 8

    asyncio.run(run())


def test_a_question_rises_to_the_top_is_answered_with_s_p_pauses_and_c_cancels_after_a_yes(
        zh: Path, sups: Supervisors, tmp_path: Path) -> None:
    sups.start()
    busy = dispatch_sim(zh, tmp_path, "busy-one", [{"say": "grinding"}, {"busy": 60}])
    wait_state(zh, busy, "working")
    asker = dispatch_sim(zh, tmp_path, "asker", [
        # working long enough (4 s) for the view to be seen showing it so on a loaded machine
        {"say": "looking around"}, {"busy": 4}, {"ask": "Which database should I use?", "expect": "postgres"},
        {"busy": 60}])

    async def run() -> None:
        app = WatchApp(Home(zh))
        async with app.run_test(size=(150, 30)) as pilot:
            await until(pilot, lambda: [j for j, _ in shown(app)] == [busy, asker]
                        and shown(app)[1][1] == "▶ working", message="both working, in age order")
            assert app.rings == 0
            await until(pilot, lambda: shown(app)[0] == (asker, "❯ waiting (question)"), message="the question on top")
            assert app.rows[asker].needs_you
            await until(pilot, lambda: "Which database should I use?" in app.rows[asker].last_line,
                        message="the question as its last line")
            assert app.rings == 1

            await select(pilot, app, asker)
            await pilot.press("s")
            await pilot.press(*"postgres", "enter")
            await until(pilot, lambda: app.rows[asker].state == "working", message="the asker working again")
            assert not app.rows[asker].needs_you
            assert [j for j, _ in shown(app)] == [busy, asker]

            await select(pilot, app, busy)
            await pilot.press("p")  # pause: its processes stopped; p again resumes it
            await until(pilot, lambda: app.rows[busy].state == "paused", message="busy paused")
            assert snap(zh, busy).state.value == "paused"
            await pilot.press("p")
            await until(pilot, lambda: app.rows[busy].state == "working", message="busy resumed")
            await select(pilot, app, busy)
            await pilot.press("c")
            await pilot.pause(0.2)
            await pilot.press("n")  # no: nothing happens
            await pilot.pause(0.5)
            assert snap(zh, busy).state.value == "working"
            await pilot.press("c")
            await pilot.press("y")
            await until(pilot, lambda: app.rows[busy].state == "cancelled", timeout=30, message="busy cancelled")
            assert snap(zh, asker).state.value == "working"
            assert names(app) == ["asker", "busy-one"]

    asyncio.run(run())
    events = [e for e in __import__("tests.supervisor.util", fromlist=["events"]).events(zh, asker)
              if e["type"] == "input.sent"]
    assert [e["text"] for e in events] == ["postgres"]


def test_the_last_output_column_follows_the_terminal_width_at_once() -> None:
    home = scene.build(Path.home() / "zen")

    async def run() -> None:
        app = scene.app_for(home)
        async with app.run_test(size=scene.SIZE) as pilot:
            await until(pilot, lambda: len(shown(app)) == 8 and app.table.settled(), message="8 rows at full width")
            fix = next(v for v in app.rows.values() if v.name == "fix-login")
            wide = app.table.get_cell(fix.job, "last").plain
            await pilot.resize_terminal(130, 24)
            await pilot.pause()
            narrow = app.table.get_cell(fix.job, "last").plain
            assert len(narrow) == len(wide) - 20 and narrow.endswith("…")
            await pilot.resize_terminal(*scene.SIZE)
            await pilot.pause()
            assert app.table.get_cell(fix.job, "last").plain == wide

    asyncio.run(run())
