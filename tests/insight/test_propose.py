"""Issue 38 step 3: an incident's commands drafted into guardian rules, simulated over history,
adopted by a human; hand-edited rules replayed by zen preflight and zen doctor."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import one_line, zen
from tests.insight.conftest import guard_events, run_fleet

FLEET = {
    "culprit": [{"bash": "ls"}, {"bash": "truncate -s 0 CHANGELOG.md"}, {"bash": "git status --short"}, {"exit": 0}],
    "bystander": [{"bash": "truncate -s 0 README.md"}, {"bash": "truncate --help"}, {"exit": 0}],
}


def new_incident(job: str) -> None:
    r = zen("incident", "new", "--id", "emptied-changelog", "--title", "An agent emptied the changelog",
            "--domain", "code", "--what-happened", f"job {job} ran truncate on CHANGELOG.md",
            "--root-cause", "nothing stops truncate", "--impact", "the changelog was lost",
            "--prevention", "deny truncate -s", "--no-demote")
    assert r.returncode == 0, r.stderr


def test_an_incident_proposes_the_rule_that_stops_it_and_shows_what_else_it_blocks(
        zh: Path, tmp_path: Path, sup) -> None:
    jobs = run_fleet(zh, tmp_path, FLEET)
    new_incident(jobs["culprit"])
    r = zen("incident", "propose", "emptied-changelog", "--json")
    assert r.returncode == 0, r.stderr
    p = json.loads(r.stdout)
    assert p["jobs"] == [jobs["culprit"]]
    assert [rule["match"] for rule in p["rules"]] == [{"command": ["truncate"], "flags": ["-s"]}]
    [stop] = p["stops"]
    culprit_seq = next(ev["seq"] for job, ev in guard_events(zh)
                       if job == jobs["culprit"] and ev.get("command") == "truncate -s 0 CHANGELOG.md")
    assert (stop["job"], stop["seq"], stop["new_decision"]) == (jobs["culprit"], culprit_seq, "deny")
    # the bystander's truncate -s is blocked too; its `truncate --help` has no -s and is not
    assert [(c["job"], c["subject"]) for c in p["also"]] == [(jobs["bystander"], "truncate -s 0 README.md")]
    text = zen("incident", "propose", "emptied-changelog")
    assert "would have stopped 1" in text.stdout and "would also block 1" in text.stdout

    # nothing is live until a human adopts it: preflight replays the live policy and finds no drift
    pre = zen("preflight", "--json")
    [line] = [c for c in json.loads(pre.stdout)["checks"] if c["check"] == "policy on history"]
    assert line["status"] == "PASS"

    # an agent may not adopt it
    r = zen("incident", "adopt", "emptied-changelog", env={"ZEN_JOB_ID": jobs["culprit"]})
    assert r.returncode != 0 and one_line(r.stderr) and "humans only" in r.stderr
    r = zen("incident", "adopt", "emptied-changelog")
    assert r.returncode == 0, r.stderr
    assert "emptied-changelog-1" in (zh / "incidents" / "emptied-changelog.yaml").read_text()

    # adopted, it is the live policy: a replay finds the two decisions it now changes
    sim = zen("policy", "simulate", "--json")
    assert sim.returncode == 1
    assert json.loads(sim.stdout)["by_rule"] == {"emptied-changelog-1": 2}
    pre = zen("preflight", "--json")
    [line] = [c for c in json.loads(pre.stdout)["checks"] if c["check"] == "policy on history"]
    assert line["status"] == "WARN" and "would change 2" in line["message"]
    doc = zen("doctor", "--json")
    [found] = [f for f in json.loads(doc.stdout)["home"] if f["check"] == "home: policy on history"]
    assert found["status"] == "warn" and "zen policy simulate" in found["fix"]
    # the guardian now denies it live
    r = zen("guard", "check", "truncate -s 0 x.txt", cwd=tmp_path)
    assert "emptied-changelog-1" in r.stdout + r.stderr


def test_an_incident_that_names_no_job_says_how_to_name_them(zh: Path) -> None:
    r = zen("incident", "new", "--id", "vague-one", "--title", "Something", "--domain", "code",
            "--what-happened", "x", "--root-cause", "y", "--impact", "z", "--prevention", "w", "--no-demote")
    assert r.returncode == 0, r.stderr
    r = zen("incident", "propose", "vague-one")
    assert r.returncode != 0 and one_line(r.stderr) and "--job" in r.stderr
    r = zen("incident", "adopt", "vague-one")
    assert r.returncode != 0 and one_line(r.stderr) and "zen incident propose" in r.stderr
