"""Issue 38 step 1-2: each guardian decision is recorded with what replaying it needs, and `zen
policy simulate` replays the recorded fleet under a proposed policy."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import zen
from tests.insight.conftest import guard_events
from zen.orchestration.insight.replay import recorded, simulate
from zen.store.home import Home


def test_a_replay_of_the_live_policy_gives_back_every_recorded_decision(zh: Path, fleet: dict[str, str]) -> None:
    events = guard_events(zh)
    denied = [ev for _, ev in events if ev["type"] == "guard.denied"]
    assert len(denied) >= 4 and len(events) >= 12
    # every decision carries the whole call and the state it was judged in
    for _, ev in events:
        r = ev["replay"]
        assert r["call"]["tool"] == ev["tool"] and r["agent"] is True and r["worktree"]
        assert r["kill"] is False and "PATH" in r["env"]
        if ev["tool"] == "Write":       # a file's text is kept once, in the tool input
            assert r["call"]["raw"]["content"] and "content" not in r["call"]
    home_log = [json.loads(line) for line in (zh / "logs" / "guard-audit.jsonl").read_text().splitlines()]
    sim = simulate(Home(zh))
    assert sim.replayed == len(events) + len(home_log) and sim.skipped == 0
    assert sim.changes == []
    r = zen("policy", "simulate")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no decision would change" in r.stdout


def test_a_proposed_rule_names_exactly_the_decisions_it_changes(zh: Path, fleet: dict[str, str],
                                                                tmp_path: Path) -> None:
    proposed = tmp_path / "guardian.yaml"
    proposed.write_text((zh / "policy" / "guardian.yaml").read_text().replace(
        "rules: []", "rules:\n  - id: no-echo\n    reason: echo is banned here\n    match:\n      command: [echo]\n"))
    expected = sorted((job, ev["seq"]) for job, ev in guard_events(zh)
                      if ev["type"] == "guard.allowed" and str(ev.get("command", "")).startswith("echo "))
    assert len(expected) == 3        # reader's and editor's redirects, and denied's last word
    r = zen("policy", "simulate", "--policy", str(proposed), "--json")
    assert r.returncode == 1, r.stderr
    out = json.loads(r.stdout)
    assert sorted((c["job"], c["seq"]) for c in out["changes"]) == expected
    assert out["by_rule"] == {"no-echo": 3}
    assert all(c["old_decision"] == "allow" and c["new_decision"] == "deny" for c in out["changes"])
    # the text form groups by rule with counts, and a lane filter keeps to that lane's jobs
    text = zen("policy", "simulate", "--policy", str(proposed))
    assert text.returncode == 1 and "3  no-echo" in text.stdout
    assert zen("policy", "simulate", "--policy", str(proposed), "--lane", "nosuch").returncode == 0


def test_a_record_written_without_a_replay_is_counted_not_judged(zh: Path, fleet: dict[str, str]) -> None:
    # a record from a zen before issue 38 carries no replay
    before = len(recorded(Home(zh)))
    log = zh / "logs" / "guard-audit.jsonl"
    with log.open("a") as f:
        f.write(json.dumps({"v": 1, "ts": "2099-01-01T00:00:00Z", "type": "guard.allowed", "decision": "allow",
                            "rule": "x", "reason": "old", "tool": "Bash", "command": "ls"}) + "\n")
    counts: dict[str, int] = {}
    assert len(recorded(Home(zh), counts=counts)) == before and counts["skipped"] == 1


def test_a_broken_proposal_is_one_clear_sentence(zh: Path, tmp_path: Path) -> None:
    bad = tmp_path / "guardian.yaml"
    bad.write_text("zen: 1\nrules:\n  - id: x\n")
    r = zen("policy", "simulate", "--policy", str(bad))
    assert r.returncode != 0 and "do not compile" in r.stderr and "Traceback" not in r.stderr
    r = zen("policy", "simulate", "--since", "soon")
    assert r.returncode != 0 and "--since" in r.stderr
