"""Review in the page (issue 35): a harvested job's diff against its base, Accept, Reject with the
correction, and Land, from the job's own detail."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import git, wait_until
from tests.server.served import Served
from tests.web.conftest import js, shot, text_of

pytestmark = pytest.mark.slow






def press(driver: Any, sel: str) -> None:
    wait_until(lambda: js(driver, "const e = document.querySelector(arguments[0]); if (!e || e.disabled) return false;"
                                  "e.click(); return true", sel), message=f"{sel} to press")


@pytest.fixture(scope="module")
def page(browser: Any, served: Served) -> Any:
    browser.get(served.zen_ok("serve", "--url"))
    wait_until(lambda: text_of(browser, "#live") == "live", message="the page")
    return browser


def test_accept_then_land_a_harvested_job_from_its_review(page: Any, served: Served) -> None:
    git(served.repo, "checkout", "-q", "-b", "review-side")
    try:
        job = served.dispatch_sim("to-review", [{"write": {"path": "src/reviewed.py", "content": "print('reviewed')\n"}},
                                                {"exit": 0}])
        served.wait_state(job, "harvested")
        page.get(f"{served.base}/agent/jobs/{job}")
        wait_until(lambda: "+print('reviewed')" in text_of(page, "#sd-diff"), timeout=15, message="the diff in the review")
        shot(page, "review")
        press(page, "#sd-accept")
        wait_until(lambda: any(e["type"] == "review.accepted" for e in served.events(job)), message="the verdict recorded")
        wait_until(lambda: "accepted" in text_of(page, "#sd-verdict"), message="the verdict on the page")
        assert js(page, "return document.querySelector('#sd-accept').disabled")
        js(page, "window.confirm = () => true")
        before = git(served.repo, "rev-parse", "main")
        press(page, "#session-detail button[data-act=land]")
        wait_until(lambda: git(served.repo, "rev-parse", "main") != before, message="Land to merge it")
        assert git(served.repo, "show", "main:src/reviewed.py") == "print('reviewed')"
    finally:
        git(served.repo, "checkout", "-q", "main")


def test_reject_records_the_correction(page: Any, served: Served) -> None:
    job = served.dispatch_sim("to-reject", [{"write": {"path": "notes.txt", "content": "wrong\n"}}, {"exit": 0}])
    served.wait_state(job, "harvested")
    page.get(f"{served.base}/agent/jobs/{job}")
    wait_until(lambda: "+wrong" in text_of(page, "#sd-diff"), timeout=15, message="the diff")
    press(page, "#sd-reject button")   # with no correction: refused in the page's words
    wait_until(lambda: "Say what was wrong" in text_of(page, "#toast"), message="the refusal")
    page.find_element("css selector", "#sd-correction").send_keys("notes.txt should say right")
    press(page, "#sd-reject button")
    wait_until(lambda: any(e["type"] == "review.rejected" for e in served.events(job)), message="the rejection")
    rejected = next(e for e in served.events(job) if e["type"] == "review.rejected")
    assert rejected["correction"] == "notes.txt should say right" and rejected["actor"] == "human"
    wait_until(lambda: "rejected" in text_of(page, "#sd-verdict"), message="the verdict on the page")


def test_a_comment_on_a_diff_line_reaches_the_waiting_agent_with_the_send(page: Any, served: Served) -> None:
    # issue 37: comments on the diff's lines, queued in the page, then one message to the agent
    job = served.dispatch_sim("to-comment", [
        {"write": {"path": "src/calc.py", "content": "def add(a, b):\n    return a - b\n"}},
        {"wait": {"turns": [[{"say": "fixing"}]]}}], "--domain", "commented")   # the reject test demotes code
    served.wait_state(job, "waiting")
    served.zen_ok("harvest", job)
    page.get(f"{served.base}/agent/jobs/{job}")
    line = "#sd-diff span[data-path='src/calc.py'][data-line='2']"
    wait_until(lambda: "return a - b" in text_of(page, line), timeout=15, message="line 2 of the diff, commentable")
    assert js(page, "return document.querySelector('#sd-accept').offsetParent === null")   # no verdict while it runs
    js(page, "document.querySelector(arguments[0]).click()", line)
    wait_until(lambda: text_of(page, "#sd-comment-where") == "src/calc.py:2", message="the comment box for line 2")
    js(page, "const i = document.querySelector('#sd-comment-text'); i.value = 'this subtracts'; "
             "i.form.requestSubmit()")
    wait_until(lambda: any(e["type"] == "comment.queued" for e in served.events(job)), message="the comment queued")
    press(page, "#sd-send-comments")
    wait_until(lambda: any(e["type"] == "review.comments" for e in served.events(job)), message="the comments sent")
    typed = [e for e in served.events(job) if e["type"] == "input.sent"][-1]["text"]
    assert "src/calc.py:2" in typed and "return a - b" in typed and "this subtracts" in typed
    served.zen_ok("cancel", job)
