"""`zen status --tmux`, the status-bar segment, through the real CLI."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import zen
from tests.tui import scene
from zen.store import events as ev_store


def test_the_segment_counts_who_works_and_who_needs_you(tmp_path: Path) -> None:
    home = scene.build(tmp_path / "zen")
    r = zen("--home", str(home.root), "status", "--tmux")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "2 working · 2 need you · 2 queued\n"

    # a hook's turn.waiting counts at once, before any supervisor has refreshed state.json
    docs = next(p for p in home.jobs.iterdir() if "docs-typos" in p.name)
    ev_store.append(docs, docs.name, "turn.waiting", actor="hook", reason="question")
    assert zen("--home", str(home.root), "status", "--tmux").stdout == "1 working · 3 need you · 2 queued\n"

    home.kill_file.write_text("reason: test\n")
    assert zen("--home", str(home.root), "status", "--tmux").stdout.startswith("KILL · 1 working")


def test_an_empty_home_says_nobody_works(home: Path) -> None:
    assert zen("status", "--tmux").stdout == "0 working\n"
