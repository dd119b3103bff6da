"""Text sent through the API's input route is text, never keys (security finding H6): a `\\r` in it
is no Enter and an escape sequence no key, so it reaches the agent as the one prompt it is."""

from __future__ import annotations

from tests.helpers import wait_until
from tests.server.served import Served
from zen.store.home import Home


def test_input_with_an_enter_and_a_paste_end_is_one_prompt(served: Served) -> None:
    job = served.dispatch_sim("typed", [{"wait": True}])
    served.wait_state(job, "waiting")
    with served.client() as c:
        r = c.post(f"/api/v1/agent/sessions/{job}/input", json={"text": "look\r!echo injected\x1b[201~ here"})
        assert r.status_code == 200, r.text
    log = Home(served.home).job(job).pane_log
    wait_until(lambda: "ok: look!echo injected here" in log.read_text(errors="replace"), timeout=20,
               message="the agent to read one prompt")
    assert "ok: !echo" not in log.read_text(errors="replace")
    served.zen_ok("cancel", job)
