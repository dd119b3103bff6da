"""Issue 38 step 4, live: a looping sim agent is flagged within its turn by the running supervisor,
announced once, and paused under its lane's `on_anomaly: pause`; zen anomalies lists it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import wait_until, zen
from tests.supervisor.util import dispatch_sim, events, snap, wait_state

LOOP = [{"say": "checking"}, {"loop": [{"bash": "cat CHANGELOG.md"}], "max": 40}, {"exit": 0}]


def set_lane(home: Path, line: str) -> None:
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    assert "    domain: code\n" in text
    cfg.write_text(text.replace("    domain: code\n", f"    domain: code\n    {line}\n", 1))


def notices_to(home: Path, out: Path) -> None:
    cfg = home / "zen.yaml"
    cfg.write_text(cfg.read_text().replace('  command: ""', f"  command: \"cat >> {out}\"", 1)
                   .replace("  desktop: true", "  desktop: false", 1))


def flagged(home: Path, job: str) -> list[dict]:
    return [e for e in events(home, job) if e["type"] == "anomaly.flagged"]


def test_a_looping_agent_is_flagged_within_its_turn_and_paused(zh: Path, tmp_path: Path, sup) -> None:
    set_lane(zh, "on_anomaly: pause")
    out = tmp_path / "notices.jsonl"
    notices_to(zh, out)
    job = dispatch_sim(zh, tmp_path, "looper", LOOP)
    wait_state(zh, job, "paused", timeout=120)
    [flag] = flagged(zh, job)
    assert flag["what"] == "tool_loop" and flag["action"] == "pause" and flag["turn"] == 1
    evs = events(zh, job)
    calls = [e for e in evs if e["type"] == "guard.allowed" and e.get("command") == "cat CHANGELOG.md"]
    # the evidence is the looping calls, all in the first turn, the flag soon after them
    assert flag["evidence"][:6] == [e["seq"] for e in calls[:6]]
    assert not any(e["type"] == "turn.waiting" and e["seq"] < flag["seq"] for e in evs)
    assert len(calls) < 40
    wait_until(lambda: out.exists() and out.read_text().strip(), timeout=10, message="the notice")
    [notice] = [json.loads(line) for line in out.read_text().splitlines()]
    assert notice["kind"] == "anomaly" and notice["job"] == job and notice["reason"] == "tool_loop"
    found = json.loads(zen("anomalies", "--json").stdout)
    assert [(f["job"], f["what"]) for f in found] == [(job, "tool_loop")]
    assert zen("resume", job).returncode == 0
    assert zen("cancel", job).returncode == 0


def test_under_notify_the_flag_is_raised_once_and_the_agent_goes_on(zh: Path, tmp_path: Path, sup) -> None:
    out = tmp_path / "notices.jsonl"
    notices_to(zh, out)
    job = dispatch_sim(zh, tmp_path, "looper", LOOP)
    wait_state(zh, job, "harvested", timeout=150)
    [flag] = flagged(zh, job)
    assert flag["what"] == "tool_loop" and flag["action"] == "notify"
    assert snap(zh, job).state.value == "harvested"
    kinds = [json.loads(line)["kind"] for line in out.read_text().splitlines()]
    assert kinds.count("anomaly") == 1


def test_an_ordinary_agent_raises_no_flag(zh: Path, tmp_path: Path, sup) -> None:
    job = dispatch_sim(zh, tmp_path, "ordinary", [{"bash": "ls"}, {"bash": "cat CHANGELOG.md"},
                                                  {"write": {"path": "a.txt", "content": "a"}}, {"exit": 0}])
    wait_state(zh, job, "harvested", timeout=120)
    assert flagged(zh, job) == []
    r = zen("anomalies")
    assert r.returncode == 0 and "no anomalies" in r.stdout
