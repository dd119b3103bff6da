"""The walker's state (words.State, join, link_pairs), sed script reading (codescan.sed_commands)
and the effective level from real files (levels.py: kill switch, job and worktree domains,
nested lanes, broken records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zen.guard.policy.levels import domain_for, kill_switch_on, lane_domain, level_for, level_of
from zen.guard.scan.code import sed_commands
from zen.guard.shell.words import UNK, State, Word, join, link_pairs, lit


# -- State and join ---------------------------------------------------------------------------------
def test_state_copy_leaves_the_original_alone() -> None:
    a = State(("/w",), {"X": "1"})
    b = a.set_vars([("X", "2"), ("Y", None)])
    assert a.vars == {"X": "1"} and b.vars == {"X": "2", "Y": None}
    assert a.copy(cwds=("/t",)).cwd == "/t" and a.cwd == "/w"


def test_join_keeps_what_every_path_agrees_on() -> None:
    a = State(("/w",), {"X": "1", "Y": "same"}, links={"/w/l": "/etc"}, funcs=frozenset({"f"}))
    b = State(("/t",), {"X": "2", "Y": "same"}, funcs=frozenset({"g"}))
    j = join(a, b)
    assert j.cwds == ("/w", "/t") and j.cwd is None
    assert j.vars == {"X": None, "Y": "same"}           # X differs: unknown
    assert j.links == {"/w/l": "/etc"}                   # a link made on one path may exist
    assert j.funcs == {"f", "g"}


def test_join_of_a_variable_set_on_one_path_only_is_unknown() -> None:
    j = join(State(("/w",), {"X": "1"}), State(("/w",)))
    assert j.vars == {"X": None} and j.cwds == ("/w",)


def test_join_with_an_unknown_cwd_is_unknown() -> None:
    assert join(State(("/w",)), State((None,))).cwds == (None,)


def test_join_of_one_state_is_that_state() -> None:
    s = State(("/w",))
    assert join(s, s) is s


def test_join_of_many_cwds_gives_up_rather_than_grow() -> None:
    states = [State((f"/d{i}",)) for i in range(64)]
    assert join(*states).cwds == (None,)


# -- link_pairs --------------------------------------------------------------------------------------------
def words(*t: str) -> list[Word]:
    return [lit(x) for x in t]


@pytest.mark.parametrize("args,pairs", [
    (("-s", "/etc", "l"), {"/w/l": "/etc", "/w/l/etc": "/etc"}),               # l may be a directory
    (("-sT", "/etc", "l"), {"/w/l": "/etc"}),
    (("-s", "/etc"), {"/w/etc": "/etc"}),
    (("-s", "../x", "sub/l"), {"/w/sub/l": "/w/x", "/w/sub/l/x": "/w/sub/x"}),  # relative to the link
    (("-sr", "x", "sub/l"), {"/w/sub/l": "/w/x", "/w/sub/l/x": "/w/x"}),        # -r: relative to the cwd
    (("-s", "-t", "d", "/a", "/b"), {"/w/d/a": "/a", "/w/d/b": "/b"}),
    (("--symbolic", "--target-directory=d", "/a"), {"/w/d/a": "/a"}),
    (("-s", "/a", "/b", "d"), {"/w/d/a": "/a", "/w/d/b": "/b"}),
    (("/etc", "hard"), {}),                                                     # not symbolic
])
def test_link_pairs(args: tuple[str, ...], pairs: dict[str, str]) -> None:
    assert link_pairs(words(*args), "/w") == pairs


def test_link_pairs_of_unknown_words_or_cwd_is_empty() -> None:
    assert link_pairs([lit("-s"), Word(UNK), lit("l")], "/w") == {}
    assert link_pairs(words("-s", "/etc", "l"), None) == {}
    assert link_pairs(words("/etc", "h"), "/w", symbolic_only=False) == {"/w/h": "/etc", "/w/h/etc": "/etc"}


# -- sed scripts -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("script,cmds", [
    ("s/a/b/g", [("s", "g")]),
    ("s|a/b|c|w out.txt", [("s", "w out.txt")]),
    ("1d;$d", [("d", ""), ("d", "")]),
    ("/x/,/y/{p;d}", [("p", ""), ("d", "")]),
    ("e rm -rf /etc", [("e", "rm -rf /etc")]),
    ("w /etc/x\np", [("w", "/etc/x"), ("p", "")]),
    ("/a\\/b/s/x/y/", [("s", "")]),
    ("y/abc/xyz/", [("y", "")]),
    ("r /u/.ssh/id_rsa", [("r", "/u/.ssh/id_rsa")]),
    ("", []),
    ("s", [("s", "")]),
])
def test_sed_commands(script: str, cmds: list[tuple[str, str]]) -> None:
    assert sed_commands(script) == cmds


# -- levels from real files ------------------------------------------------------------------------------
@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / "control").mkdir(parents=True)
    (h / "jobs").mkdir()
    (h / "worktrees").mkdir()
    return h


def job(home: Path, job_id: str, state: object) -> Path:
    d = home / "jobs" / job_id
    d.mkdir()
    (d / "state.json").write_text(state if isinstance(state, str) else json.dumps(state))
    wt = home / "worktrees" / job_id
    wt.mkdir()
    return wt


AUTO = {"default_level": "suggest", "domains": {"data": "observe", "ops": "autonomous"}}


def test_level_of_defaults() -> None:
    assert level_of({}, None) == "suggest"
    assert level_of({"default_level": "act-and-report"}, "nope") == "act-and-report"
    assert level_of(AUTO, "ops") == "autonomous"


def test_kill_switch_is_a_file_and_nothing_else(home: Path) -> None:
    assert not kill_switch_on(str(home)) and not kill_switch_on(None) and not kill_switch_on("")
    (home / "control" / "KILL").write_text("")
    assert kill_switch_on(str(home))
    assert level_for(str(home), None, None, AUTO) == ("observe", None)


def test_a_broken_state_json_falls_back_to_the_task_then_the_default(home: Path) -> None:
    job(home, "j1", "{not json")
    assert level_for(str(home), "j1", None, AUTO) == ("suggest", None)
    (home / "jobs" / "j1" / "task.yaml").write_text("domain: data\n")
    assert level_for(str(home), "j1", None, AUTO) == ("observe", "data")


def test_a_state_json_with_a_non_string_domain_is_ignored(home: Path) -> None:
    job(home, "j2", {"domain": 7})
    assert domain_for(str(home), "j2", None) is None


def test_the_worktree_holding_the_cwd_names_the_job_even_through_a_link(home: Path, tmp_path: Path) -> None:
    wt = job(home, "j3", {"domain": "ops"})
    (wt / "src").mkdir()
    (tmp_path / "alias").symlink_to(wt)
    assert domain_for(str(home), None, str(wt / "src")) == "ops"
    assert domain_for(str(home), None, str(tmp_path / "alias" / "src")) == "ops"
    # a folder in worktrees/ with no job record is nobody's
    (home / "worktrees" / "stray").mkdir()
    assert domain_for(str(home), None, str(home / "worktrees" / "stray")) is None


def test_the_deepest_lane_holding_the_cwd_wins(home: Path, tmp_path: Path) -> None:
    outer, inner = tmp_path / "mono", tmp_path / "mono" / "warehouse"
    inner.mkdir(parents=True)
    (home / "zen.yaml").write_text(f"lanes:\n  mono:\n    path: {outer}\n  wh:\n    path: {inner}\n"
                                   "    domain: data\n")
    assert lane_domain(str(home), str(inner / "models")) == "data"
    assert lane_domain(str(home), str(outer / "app")) == "code"       # a lane without a domain is code
    assert lane_domain(str(home), str(tmp_path / "monorepo")) is None  # a longer name is not inside
    assert level_for(str(home), None, str(inner), AUTO) == ("observe", "data")


def test_an_unreadable_zen_yaml_means_no_lanes(home: Path) -> None:
    (home / "zen.yaml").write_bytes(b"\xff\xfe lanes: [")
    assert lane_domain(str(home), "/anywhere") is None
