"""Dispatch's two lanes in-process: `prepare` (the user's fields made a complete task, or one
sentence saying what is wrong), the fast lane `enqueue` and the model lane `dispatch`, and the
task files they publish to spool/new."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, make_repo, one_line, tune
from zen.core.taskcheck import _ONLY_WHEN_SET as ONLY_WHEN_SET
from zen.core.taskcheck import read_text
from zen.errors import InvalidTask, ZenError
from zen.orchestration.intake import enqueue as fast
from zen.orchestration.intake.dispatch import dispatch
from zen.orchestration.lanes import add_lane
from zen.store.config import Config
from zen.store.home import Home
from zen.store.jobs import load_task_text


def fields(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"prompt": "Fix the login bug now please", "lane": None, "repo": None, "name": None,
                            "agent": None, "priority": None, "depends_on": [], "command": None}
    return {**base, **kw}


def spooled(home: Path) -> list[Path]:
    return sorted((home / "spool" / "new").glob("*.yaml"))


def prep(home: Path, **kw: Any) -> dict[str, Any]:
    return fast.prepare(Config.load(Home(home)), fields(**kw))


def refusal(home: Path, **kw: Any) -> str:
    with pytest.raises(InvalidTask) as exc:
        prep(home, **kw)
    msg = str(exc.value)
    assert one_line(msg), msg
    return msg


# -- prepare ------------------------------------------------------------------------------------

def test_the_only_lane_is_chosen_and_the_homes_defaults_fill_the_rest(lane: Path, home: Path) -> None:
    f = prep(home)
    assert f["lane"] == "app" and f["base"] == "main" and f["domain"] == "code"
    assert (f["agent"], f["priority"], f["timeout"], f["max_retries"], f["created_by"]) == ("sim", 3, "30m", 0, "human")
    assert f["name"] == "fix-the-login-bug"
    assert f["id"].endswith(f"-{f['name']}-" + f["id"].rsplit("-", 1)[1]) and f["id"][:8].isdigit()
    assert "depends_on" not in f and "command" not in f   # None and [] mean "not given"


def test_the_homes_defaults_section_is_what_fills_a_task(lane: Path, home: Path) -> None:
    tune(home, **{"  agent: sim  ": "  agent: cmd  ", "  priority: 3  ": "  priority: 1  ",
                  "  timeout: 30m ": "  timeout: 2h  "})
    f = prep(home)
    assert (f["agent"], f["priority"], f["timeout"]) == ("cmd", 1, "2h")


@pytest.mark.parametrize("prompt", ["", "   \n\t  ", None])
def test_an_empty_prompt_is_refused_saying_how_to_give_one(lane: Path, home: Path, prompt: str | None) -> None:
    assert "prompt is empty" in refusal(home, prompt=prompt)


def test_a_prompt_over_the_size_limit_is_refused_with_both_sizes_and_the_setting(lane: Path, home: Path) -> None:
    tune(home, **{"max_prompt_size: 1MiB": "max_prompt_size: 1KiB"})
    msg = refusal(home, prompt="x" * 2048)
    assert "2.0 KiB" in msg or "2 KiB" in msg or "2048" in msg, msg
    assert "limits.max_prompt_size" in msg
    assert prep(home, prompt="x" * 1024)["prompt"] == "x" * 1024   # exactly the limit is fine


def test_the_size_limit_counts_bytes_not_characters(lane: Path, home: Path) -> None:
    tune(home, **{"max_prompt_size: 1MiB": "max_prompt_size: 1KiB"})
    refusal(home, prompt="é" * 600)             # 600 characters, 1200 bytes
    assert prep(home, prompt="é" * 500)["prompt"] == "é" * 500


def test_two_lanes_and_none_named_is_refused_listing_them(lane: Path, home: Path, tmp_path: Path) -> None:
    add_lane(Home(home), "web", str(make_repo(tmp_path / "web")), None, None)
    msg = refusal(home)
    assert "--lane" in msg and "known: app, web" in msg


def test_no_lane_at_all_says_how_to_add_one(home: Path) -> None:
    assert "zen lane add" in refusal(home)


def test_an_unknown_lane_is_refused_naming_the_known_ones(lane: Path, home: Path) -> None:
    with pytest.raises(ZenError) as exc:
        prep(home, lane="nope")
    assert one_line(str(exc.value)) and "'nope'" in str(exc.value) and "app" in str(exc.value)


def test_lane_and_repo_together_are_refused(lane: Path, home: Path) -> None:
    assert "either --lane or --repo" in refusal(home, lane="app", repo=str(lane))


def test_a_repo_that_is_not_git_is_refused(lane: Path, home: Path, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    msg = refusal(home, repo=str(plain))
    assert "is not a git repository" in msg and str(plain) in msg


def test_a_repo_given_by_a_subfolder_is_its_top_level_on_its_current_branch(home: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "other", branch="trunk")
    git(repo, "checkout", "-q", "-b", "feature")
    f = prep(home, repo=str(repo / "src"))
    assert f["repo"] == str(repo) and f["base"] == "feature" and f["domain"] == "code"
    assert "lane" not in f


def test_a_base_that_does_not_resolve_is_refused_naming_it_and_the_repo(lane: Path, home: Path) -> None:
    msg = refusal(home, base="no-such-branch")
    assert "'no-such-branch'" in msg and str(lane) in msg


def test_a_base_may_be_any_commit_the_repo_resolves(lane: Path, home: Path) -> None:
    first = git(lane, "rev-list", "--max-parents=0", "HEAD")
    assert prep(home, base=first[:10])["base"] == first[:10]
    assert prep(home, base="HEAD~1")["base"] == "HEAD~1"


@pytest.mark.parametrize(("priority", "words"), [("high", "whole number"), (0, "from 1 (first) to 5"),
                                                 (6, "from 1 (first) to 5")])
def test_priorities_outside_one_to_five_or_not_whole_are_refused(lane: Path, home: Path, priority: Any,
                                                                  words: str) -> None:
    assert words in refusal(home, priority=priority)


def test_a_priority_given_as_text_is_made_a_number(lane: Path, home: Path) -> None:
    assert prep(home, priority="5")["priority"] == 5


def test_a_name_given_is_kept_and_the_id_is_made_from_it(lane: Path, home: Path) -> None:
    f = prep(home, name="login-fix")
    assert f["name"] == "login-fix" and "-login-fix-" in f["id"]


def test_a_unicode_prompt_gets_a_usable_name(lane: Path, home: Path) -> None:
    f = prep(home, prompt="Réparer la connexion 🔐 vite")
    task = load_task_text(_publish(home, f), "t")
    assert task.prompt == "Réparer la connexion 🔐 vite"
    assert task.name and task.name == f["name"]


def _publish(home: Path, f: dict[str, Any]) -> str:
    published = fast.enqueue(Home(home), f)
    assert published is not None
    return (home / "spool" / "new" / f"{published['id']}.yaml").read_text()


# -- the fast lane ------------------------------------------------------------------------------

def test_enqueue_publishes_one_task_file_that_the_model_reads_back_as_the_same_task(lane: Path, home: Path) -> None:
    task = fast.enqueue(Home(home), fields(prompt="Add a --verbose flag\n\nwith: colons, 'quotes' and # hashes"))
    assert task is not None
    [path] = spooled(home)
    assert path.name == f"{task['id']}.yaml"
    text = path.read_text()
    model = load_task_text(text, "t")
    assert model.model_dump(mode="json", exclude_none=True) == {k: v for k, v in task.items() if v is not None}
    # the stdlib reader reads the same mapping (the fields only written when set are left out)
    assert read_text(text) == {k: v for k, v in task.items() if v is not None or k not in ONLY_WHEN_SET}
    assert not list((home / "spool" / "tmp").iterdir())   # no temp file left behind


def test_enqueue_leaves_dependencies_to_the_model_lane_and_writes_nothing(lane: Path, home: Path) -> None:
    assert fast.enqueue(Home(home), fields(depends_on=["earlier"])) is None
    assert spooled(home) == []


def test_enqueue_and_dispatch_write_the_same_task_for_the_same_fields(lane: Path, home: Path) -> None:
    h = Home(home)
    a = fast.enqueue(h, fields(name="same", prompt="Do the thing", priority=2))
    b = dispatch(h, fields(name="same", prompt="Do the thing", priority=2))
    assert a is not None
    texts = {p.stem: p.read_text() for p in spooled(home)}
    ta, tb = load_task_text(texts[a["id"]], "a"), load_task_text(texts[b.id], "b")
    keep = {"id", "created_at"}
    assert ta.model_dump(exclude=keep) == tb.model_dump(exclude=keep)


def test_a_taken_id_is_replaced_by_a_fresh_one_and_the_old_file_is_untouched(lane: Path, home: Path) -> None:
    h = Home(home)
    first = fast.enqueue(h, fields(name="dup"))
    assert first is not None
    before = (home / "spool" / "new" / f"{first['id']}.yaml").read_bytes()
    second = fast.enqueue(h, fields(name="dup", id=first["id"], prompt="another prompt"))
    assert second is not None and second["id"] != first["id"] and "-dup-" in second["id"]
    assert (home / "spool" / "new" / f"{first['id']}.yaml").read_bytes() == before
    assert len(spooled(home)) == 2


def test_an_id_held_by_an_existing_job_is_not_reused(lane: Path, home: Path) -> None:
    h = Home(home)
    taken = "20270101T000000Z-held-beef"
    h.job_dir(taken).mkdir(parents=True)
    task = fast.enqueue(h, fields(id=taken, name="held"))
    assert task is not None and task["id"] != taken


def test_a_full_queue_refuses_in_one_line_naming_the_setting_and_writes_nothing(lane: Path, home: Path) -> None:
    tune(home, **{"max_queue_size: 100 ": "max_queue_size: 2   "})
    h = Home(home)
    assert fast.enqueue(h, fields()) is not None
    assert fast.enqueue(h, fields()) is not None
    with pytest.raises(ZenError) as exc:
        fast.enqueue(h, fields())
    assert one_line(str(exc.value)) and "supervisor.max_queue_size" in str(exc.value) and "2 tasks" in str(exc.value)
    with pytest.raises(ZenError):
        dispatch(h, fields())           # the model lane keeps the same limit
    assert len(spooled(home)) == 2


# -- the model lane -----------------------------------------------------------------------------

def test_dispatch_resolves_a_dependency_by_the_name_of_a_waiting_task(lane: Path, home: Path) -> None:
    h = Home(home)
    first = dispatch(h, fields(name="build"))
    second = dispatch(h, fields(name="deploy", depends_on=["build"]))
    assert second.depends_on == [first.id]
    assert load_task_text((home / "spool" / "new" / f"{second.id}.yaml").read_text(), "t").depends_on == [first.id]


def test_dispatch_keeps_each_dependency_once_in_the_order_given(lane: Path, home: Path) -> None:
    h = Home(home)
    a, b = dispatch(h, fields(name="aa")), dispatch(h, fields(name="bb"))
    c = dispatch(h, fields(name="cc", depends_on=["bb", "aa", "bb", a.id]))
    assert c.depends_on == [b.id, a.id]


def test_an_unknown_dependency_is_refused_and_nothing_is_written(lane: Path, home: Path) -> None:
    with pytest.raises(InvalidTask) as exc:
        dispatch(Home(home), fields(name="late", depends_on=["ghost"]))
    assert one_line(str(exc.value)) and "ghost" in str(exc.value)
    assert spooled(home) == []


def test_a_task_cannot_depend_on_itself(lane: Path, home: Path) -> None:
    with pytest.raises(InvalidTask) as exc:
        dispatch(Home(home), fields(name="loop", depends_on=["loop"]))
    assert "cannot depend on itself" in str(exc.value)


def test_a_task_file_that_closes_a_cycle_is_refused_showing_the_cycle(lane: Path, home: Path, tmp_path: Path) -> None:
    h = Home(home)
    own = "20270101T000000Z-one-aaaa"
    two = dispatch(h, fields(name="two", depends_on=[]))
    # a waiting task depending on the id the task file is about to claim
    path = home / "spool" / "new" / f"{two.id}.yaml"
    path.write_text(path.read_text().replace("depends_on: []", f"depends_on:\n- {own}"))
    spec = tmp_path / "task.yaml"
    spec.write_text(f"id: {own}\nname: one\nprompt: first\ndepends_on: [two]\n")
    with pytest.raises(InvalidTask) as exc:
        dispatch(h, fields(prompt=None), task_file=spec)
    assert "dependency cycle" in str(exc.value) and own in str(exc.value) and two.id in str(exc.value)
    assert len(spooled(home)) == 1


def test_a_task_files_fields_yield_to_the_ones_given_on_the_command_line(lane: Path, home: Path, tmp_path: Path) -> None:
    spec = tmp_path / "task.yaml"
    spec.write_text("zen: 1\nname: from-file\nprompt: from the file\npriority: 4\ntimeout: 1h\n")
    task = dispatch(Home(home), fields(prompt=None, priority=1), task_file=spec)
    assert (task.name, task.prompt, task.priority, task.timeout) == ("from-file", "from the file", 1, "1h")


@pytest.mark.parametrize(("text", "words"), [(None, "cannot read"), ("a: [unclosed", "is not valid YAML"),
                                             ("- just\n- a list\n", "expected a YAML mapping")])
def test_a_task_file_that_cannot_be_used_is_refused_in_one_line(lane: Path, home: Path, tmp_path: Path,
                                                                text: str | None, words: str) -> None:
    spec = tmp_path / "task.yaml"
    if text is not None:
        spec.write_text(text)
    with pytest.raises(InvalidTask) as exc:
        dispatch(Home(home), fields(prompt=None), task_file=spec)
    assert one_line(str(exc.value)) and words in str(exc.value), str(exc.value)
    assert spooled(home) == []


def test_a_field_the_model_refuses_is_explained_in_one_line(lane: Path, home: Path) -> None:
    with pytest.raises(InvalidTask) as exc:
        dispatch(Home(home), fields(agent="no-such-agent"))
    assert one_line(str(exc.value)) and "agent" in str(exc.value)
    assert spooled(home) == []
