"""zen init, home resolution, lanes, and the error funnel."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import make_repo, one_line, zen
from zen.errors import NoHome
from zen.store.config import Config
from zen.store.home import find_home
from zen.store.layout import Home
from zen.store.readers import (
    HomeError,
    discover_home,
    job_domain,
    read_lanes,
    read_state,
    task_field,
)

LAYOUT = ["zen.yaml", "policy", "incidents", "jobs", "spool/tmp", "spool/new", "spool/cur", "worktrees",
          "control", "approvals/pending", "approvals/granted", "approvals/denied", "evidence"]


def test_init_creates_the_layout_with_a_commented_config(tmp_path: Path) -> None:
    r = zen("init", str(tmp_path / "h"))
    assert r.returncode == 0, r.stderr
    for entry in LAYOUT:
        assert (tmp_path / "h" / entry).exists(), entry
    text = (tmp_path / "h" / "zen.yaml").read_text()
    assert text.startswith("# zen home configuration")
    assert "max_concurrent_tasks" in text and "# agents alive at once" in text
    mode = (tmp_path / "h" / "zen.yaml").stat().st_mode
    assert mode & 0o400 and not mode & 0o077, "the config is the user's: readable by them, by nobody else (L16)"


def test_init_is_idempotent_and_never_overwrites_edits(tmp_path: Path) -> None:
    h = tmp_path / "h"
    assert zen("init", str(h)).returncode == 0
    (h / "zen.yaml").write_text((h / "zen.yaml").read_text() + "\n# my own note\n")
    policy_files = sorted((h / "policy").glob("*.yaml"))
    for p in policy_files:
        p.write_text(p.read_text() + "\n# edited by me\n")
    r = zen("init", str(h), "--json")
    assert r.returncode == 0
    assert json.loads(r.stdout)["created"] == []
    assert "# my own note" in (h / "zen.yaml").read_text()
    for p in policy_files:
        assert "# edited by me" in p.read_text()


def test_home_resolution_order(tmp_path: Path, monkeypatch) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    zen("init", str(a))
    zen("init", str(b))
    (a / "deep" / "er").mkdir(parents=True)
    # ancestor discovery
    r = zen("lane", "list", "--json", cwd=a / "deep" / "er")
    assert r.returncode == 0 and json.loads(r.stdout) == []
    # $ZEN_HOME beats the cwd, --home beats $ZEN_HOME
    repo = make_repo(tmp_path / "r")
    assert zen("--home", str(b), "lane", "add", "only-b", str(repo)).returncode == 0
    r = zen("lane", "list", "--json", cwd=a, env={"ZEN_HOME": str(b)})
    assert [x["name"] for x in json.loads(r.stdout)] == ["only-b"]
    r = zen("--home", str(a), "lane", "list", "--json", env={"ZEN_HOME": str(b)})
    assert json.loads(r.stdout) == []


def test_no_home_is_one_sentence_naming_zen_init(tmp_path: Path) -> None:
    r = zen("status", cwd=tmp_path)
    assert r.returncode == 1
    assert one_line(r.stderr) and "zen init" in r.stderr
    r = zen("status", env={"ZEN_HOME": str(tmp_path / "nothing")})
    assert r.returncode == 1 and one_line(r.stderr) and "zen init" in r.stderr


def test_lane_add_list_remove_keeps_comments(home: Path, git_repo: Path) -> None:
    cfg = home / "zen.yaml"
    cfg.write_text(cfg.read_text().replace("lanes: {}", "# my lanes below\nlanes: {}"))
    r = zen("lane", "add", "app", str(git_repo), "--domain", "infra")
    assert r.returncode == 0, r.stderr
    lanes = json.loads(zen("lane", "list", "--json").stdout)
    assert lanes == [{"name": "app", "path": str(git_repo), "base": "main", "domain": "infra"}]
    text = cfg.read_text()
    assert "# my lanes below" in text and "# agents alive at once" in text
    assert zen("lane", "remove", "app").returncode == 0
    assert json.loads(zen("lane", "list", "--json").stdout) == []
    assert "# my lanes below" in cfg.read_text()


def test_lane_add_refuses_bad_paths_and_bases(home: Path, git_repo: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    before = (home / "zen.yaml").read_text()
    for args, words in (
        (["lane", "add", "x", str(plain)], "not a git repository"),
        (["lane", "add", "x", str(tmp_path / "missing")], "does not exist"),
        (["lane", "add", "x", str(git_repo), "--base", "no-such-branch"], "does not resolve"),
        (["lane", "add", "Bad Name", str(git_repo)], "lane name"),
    ):
        r = zen(*args)
        assert r.returncode == 1, args
        assert one_line(r.stderr) and words in r.stderr, r.stderr
    assert (home / "zen.yaml").read_text() == before
    assert zen("lane", "add", "app", str(git_repo)).returncode == 0
    r = zen("lane", "add", "app", str(git_repo))
    assert r.returncode == 1 and "already exists" in r.stderr
    r = zen("lane", "remove", "ghost")
    assert r.returncode == 1 and one_line(r.stderr)


def test_usage_errors_exit_2(home: Path) -> None:
    r = zen("dispatch", "--no-such-flag")
    assert r.returncode == 2
    r = zen("lane", "add")
    assert r.returncode == 2


def test_unexpected_errors_exit_3_with_a_log(lane: Path, home: Path) -> None:
    # Force a condition no code path expects: a job whose events.jsonl is a directory.
    from tests.test_jobs import claim_all

    zen("dispatch", "x", "--name", "bug")
    [job_id] = claim_all(home)
    events = home / "jobs" / job_id / "events.jsonl"
    events.unlink()
    events.mkdir()
    r = zen("log", job_id)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    log = r.stderr.strip().split(" in ")[-1]
    assert Path(log).is_file() and "Traceback" in Path(log).read_text()


def test_help_explains_every_command() -> None:
    r = zen("--help")
    assert r.returncode == 0
    for cmd in ("init", "dispatch", "status", "show", "log", "lane", "doctor"):
        assert cmd in r.stdout
    r = zen("dispatch", "--help")
    assert "--depends-on" in r.stdout and "stdin" in r.stdout


# -- the layout and the lean readers (zen.store.layout, zen.store.readers) ------------------------

def test_the_layout_names_every_file_design_section_2_lists(home: Path) -> None:
    h = Home(home)
    rel = {name: str(getattr(h, name).relative_to(home)) for name in (
        "config_path", "guardian_policy", "autonomy_policy", "incidents", "spool_tmp", "spool_new", "spool_cur",
        "worktrees", "kill_file", "supervisor_lock", "heartbeat", "api_token", "evidence", "coord",
        "control_log", "guard_audit_log", "supervisor_log")}
    assert rel == {"config_path": "zen.yaml", "guardian_policy": "policy/guardian.yaml",
                   "autonomy_policy": "policy/autonomy.yaml", "incidents": "incidents",
                   "spool_tmp": "spool/tmp", "spool_new": "spool/new", "spool_cur": "spool/cur",
                   "worktrees": "worktrees", "kill_file": "control/KILL",
                   "supervisor_lock": "control/supervisor.lock", "heartbeat": "control/heartbeat",
                   "api_token": "control/api-token", "evidence": "evidence", "coord": "coord",
                   "control_log": "logs/control.jsonl", "guard_audit_log": "logs/guard-audit.jsonl",
                   "supervisor_log": "logs/supervisor.log"}
    # what zen init made is what the layout names
    for path in (h.guardian_policy, h.autonomy_policy, h.spool_new, h.approvals_in("granted")):
        assert path.exists(), path
    j = h.job("20261129T101500Z-x-1234")
    assert {k: getattr(j, k).name for k in ("task", "events", "state", "pane_log", "handoff", "review",
                                             "exit_file", "metrics", "lock")} == {
        "task": "task.yaml", "events": "events.jsonl", "state": "state.json", "pane_log": "pane.log",
        "handoff": "handoff.md", "review": "review.md", "exit_file": "exit_code",
        "metrics": "metrics.json", "lock": ".lock"}
    assert j.dir == home / "jobs" / "20261129T101500Z-x-1234" == h.job_dir("20261129T101500Z-x-1234")
    assert h.evidence_file("code") == home / "evidence" / "code.jsonl"
    assert h == Home(str(home)) and len({h, Home(home)}) == 1
    assert h.tmux_socket.startswith("zen-") and h.tmux_socket == Home(home).tmux_socket


def test_discover_home_is_the_one_home_finder(tmp_path: Path, home: Path) -> None:
    deep = home / "worktrees" / "x" / "src"
    deep.mkdir(parents=True)
    assert discover_home(str(deep), env={}) == str(home)
    assert discover_home(str(tmp_path / "nowhere"), env={}) is None
    assert discover_home("/", env={"ZEN_HOME": str(home)}) == str(home)
    assert discover_home("/", str(home), env={"ZEN_HOME": "/elsewhere"}) == str(home)
    for bad in ({"explicit": str(tmp_path)}, {"env": {"ZEN_HOME": str(tmp_path)}}):
        try:
            discover_home("/", bad.get("explicit"), env=bad.get("env", {}))
        except HomeError as exc:
            assert "is not a zen home (run zen init" in str(exc)
            assert isinstance(exc, NoHome)
        else:
            raise AssertionError("a non-home must be refused")
    assert find_home(cwd=deep).root == home


def test_read_lanes_reads_what_zen_writes_and_falls_back_for_flow_style(home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    assert zen("lane", "add", "app", str(repo), "--domain", "data", "--setup", "npm ci && make x").returncode == 0
    lanes = read_lanes(str(home))
    assert lanes["app"]["path"] == str(repo) and lanes["app"]["domain"] == "data"
    assert lanes["app"]["setup"] == "npm ci && make x"
    assert lanes == {n: {k: str(v) for k, v in s.items() if not isinstance(v, list)}
                     for n, s in Config.load(Home(home)).lanes.items()}
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    cfg.write_text(text.replace("lanes:", "lanes_old:") + "\nlanes: {web: {path: /srv/web, domain: 'ops'}}\n")
    assert read_lanes(str(home)) == {"web": {"path": "/srv/web", "domain": "ops"}}
    cfg.write_text("zen: 1\nlanes:\n  api:\n    path: /srv/api   # the service\n    base: \"main\"\n"
                   "    domain: ~\ndefaults: {}\n")
    assert read_lanes(str(home)) == {"api": {"path": "/srv/api", "base": "main", "domain": ""}}
    assert read_lanes(str(tmp_path / "no-home")) == {}


def test_a_jobs_domain_and_state_come_from_state_json_then_task_yaml(home: Path) -> None:
    d = home / "jobs" / "j1"
    d.mkdir()
    (d / "task.yaml").write_text("zen: 1\nname: x\ndomain: \"infra\"  # from the lane\n")
    assert job_domain(str(home), "j1") == "infra" and read_state(str(home), "j1") is None
    (d / "state.json").write_text(json.dumps({"job": "j1", "domain": "data", "state": "working"}))
    assert job_domain(str(home), "j1") == "data" and read_state(str(home), "j1")["state"] == "working"
    (d / "state.json").write_text("{torn")
    assert job_domain(str(home), "j1") == "infra" and read_state(str(home), "j1") is None
    assert task_field(str(home), "j1", "name") == "x" and task_field(str(home), "j1", "nope") is None
    for bad in ("../j1", ".", "..", "", ".hidden", "a/b"):
        assert job_domain(str(home), bad) is None and read_state(str(home), bad) is None
