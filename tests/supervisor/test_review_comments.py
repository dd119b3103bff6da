"""Review comments back to the agent (issue 37): comments on lines of a job's harvested work are
queued, then typed into the waiting agent as one message naming each file, line and the line's
text; recorded as a review round. What the agent read is checked in its own pane log."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import one_line, wait_until, zen
from tests.supervisor.util import dispatch_sim, events, wait_state
from zen.store.home import Home


def test_comments_on_lines_reach_the_waiting_agent_as_one_message_and_make_a_review_round(
        zh: Path, lane: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "commented", [
        {"write": {"path": "src/calc.py", "content": "def add(a, b):\n    return a - b\n\nTAX = 0.2\n"}},
        {"wait": {"turns": [[{"say": "fixing as asked"}]]}}])
    wait_state(zh, job, "waiting", timeout=30)
    assert zen("harvest", job).returncode == 0

    r = zen("comment", job, "src/calc.py:2", "this subtracts; add them", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["line_text"] == "    return a - b"
    assert zen("comment", job, "src/calc.py:4", "where does 0.2 come from?").returncode == 0
    for bad, said in ((("src/calc.py:9", "x"), "lines"), (("nowhere.py:1", "x"), "not a file"),
                      (("src/calc.py", "x"), "PATH:LINE")):
        r = zen("comment", job, *bad)
        assert r.returncode != 0 and one_line(r.stderr) and said in r.stderr, r.stderr

    sent_before = len([e for e in events(zh, job) if e["type"] == "input.sent"])
    r = zen("comment", job, "--send", "--json")
    assert r.returncode == 0, r.stderr
    assert (json.loads(r.stdout)["round"], json.loads(r.stdout)["count"]) == (1, 2)
    typed = [e for e in events(zh, job) if e["type"] == "input.sent"]
    assert len(typed) == sent_before + 1                    # one message for both comments
    text = typed[-1]["text"]
    for part in ("src/calc.py:2", "return a - b", "this subtracts; add them",
                 "src/calc.py:4", "TAX = 0.2", "where does 0.2 come from?"):
        assert part in text, text
    rounds = [e for e in events(zh, job) if e["type"] == "review.comments"]
    assert len(rounds) == 1 and rounds[0]["count"] == 2
    log = Home(zh).job(job).pane_log
    wait_until(lambda: "where does 0.2 come from?" in log.read_text(errors="replace"), timeout=20,
               message="the agent to read the comments")
    r = zen("comment", job, "--send")                       # nothing queued any more
    assert r.returncode == 1 and "no comments are queued" in r.stderr
    zen("cancel", job)
