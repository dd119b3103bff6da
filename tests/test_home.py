"""zen init, home resolution, lanes, and the error funnel."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import make_repo, one_line, zen

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
    assert (tmp_path / "h" / "zen.yaml").stat().st_mode & 0o044, "config must be readable by the user's tools"


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
