"""The dashboard's Machine tab (issue 39): every Claude Code session of the user, the ones started
by hand too, with their tokens counted once, as `zen sessions` lists them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.attached.test_sessions import _claude_lines, _write
from tests.helpers import wait_until
from tests.server.served import Served

pytestmark = pytest.mark.slow


def test_the_machine_tab_lists_a_session_started_outside_zen_with_its_tokens(browser: Any, served: Served) -> None:
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 0}
    lines = _claude_lines("s-by-hand", "/work/by-hand", [("msg_1", "req_1", usage), ("msg_2", "req_2", usage)],
                          days_ago=1)
    _write(served.userhome / ".claude" / "projects" / "-work-by-hand" / "s-by-hand.jsonl", lines)
    browser.get(served.zen_ok("serve", "--url"))
    wait_until(lambda: browser.current_url.endswith("/agent"), message="the dashboard")
    browser.get(f"{served.base}/agent/machine")
    row = "#machine-rows tr[data-session='s-by-hand']"
    text = wait_until(lambda: browser.execute_script(
        "const r = document.querySelector(arguments[0]); return r ? r.textContent : ''", row), timeout=15,
        message="the hand-started session's row")
    assert "/work/by-hand" in text and "3,000" in text and "by hand" in text, text   # 2 calls, counted once each
