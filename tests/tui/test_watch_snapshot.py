"""The screen of `zen watch` on the fixed scene, compared with the accepted SVG snapshot.

After a deliberate change of the view: `pytest tests/tui/test_watch_snapshot.py --snapshot-update`,
look at the new SVG (tests/tui/__snapshots__/), and commit it with the change.
"""

from __future__ import annotations

import pytest

pytest.importorskip("textual", reason="textual is not installed (make install installs it)")
pytest.importorskip("pytest_textual_snapshot", reason="pytest_textual_snapshot is not installed (make install installs it)")

from pathlib import Path
from typing import Any

from tests.tui import scene
from tests.tui.pilot import shown, until


def test_the_screen_of_zen_watch(snap_compare: Any) -> None:
    app = scene.app_for(scene.build(Path.home() / "zen"))

    async def loaded(pilot: Any) -> None:
        await until(pilot, lambda: len(shown(app)) == len(scene.JOBS) + 1 and app.header is not None
                    and app.table.settled(), message="every row, the banner and the table at its width")

    assert snap_compare(app, terminal_size=scene.SIZE, run_before=loaded)
