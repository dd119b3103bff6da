"""zen.store.config: zen.yaml read with defaults, its errors one sentence naming the file and the
key, its edits keeping the user's comments, and the parse cache (in-process and
logs/.config-cache.json) never hiding an edit on disk nor trusting a damaged cache."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from zen.errors import NotFound, ZenError
from zen.store import config
from zen.store.config import CACHE_FILE, DEFAULT_CONFIG, Config, edit_config, lane_path
from zen.store.home import init_home
from zen.store.layout import Home


@pytest.fixture
def zh(tmp_path: Path) -> Home:
    home, _ = init_home(tmp_path / "zh")
    return home


@pytest.fixture
def no_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh process: nothing parsed in memory yet (only the file cache can help)."""
    monkeypatch.setattr(config, "_CACHE", {})


def _write(home: Home, text: str) -> None:
    home.config_path.write_text(text)


def _one_line(exc: BaseException) -> str:
    msg = str(exc)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


# -- defaults ---------------------------------------------------------------------------------------

def test_the_shipped_default_config_reads_as_the_built_in_defaults(zh: Home) -> None:
    cfg = Config.load(zh)
    for section, values in config._DEFAULTS.items():
        if section != "agents":       # the shipped file lists the agents' commands; no defaults
            assert cfg.section(section) == values, section
    assert cfg.lanes == {}


def test_a_missing_key_falls_back_to_its_default_and_a_set_one_wins(zh: Home) -> None:
    _write(zh, "zen: 1\nsupervisor:\n  max_concurrent_tasks: 9\n")
    cfg = Config.load(zh)
    assert cfg.get("supervisor", "max_concurrent_tasks") == 9
    assert cfg.get("supervisor", "kill_grace") == "5s"
    assert cfg.seconds("supervisor", "tick") == 0.25


def test_an_empty_zen_yaml_is_the_default_config(zh: Home) -> None:
    _write(zh, "")
    cfg = Config.load(zh)
    assert cfg.get("defaults", "agent") == "sim" and cfg.lanes == {}


def test_a_section_set_to_null_is_its_defaults(zh: Home) -> None:
    _write(zh, "zen: 1\nretry:\nlanes:\n")
    cfg = Config.load(zh)
    assert cfg.section("retry") == config._DEFAULTS["retry"]
    assert cfg.lanes == {}


def test_durations_and_sizes_in_their_human_forms(zh: Home) -> None:
    _write(zh, "zen: 1\nsupervisor:\n  kill_grace: 1m30s\n  tick: 2\n"
               "limits:\n  max_prompt_size: 2MiB\n  min_free_disk: 1000\n")
    cfg = Config.load(zh)
    assert cfg.seconds("supervisor", "kill_grace") == 90.0
    assert cfg.seconds("supervisor", "tick") == 2.0
    assert cfg.size("limits", "max_prompt_size") == 2 * 1024 * 1024
    assert cfg.size("limits", "min_free_disk") == 1000


# -- errors, one sentence each ------------------------------------------------------------------------

def test_a_bad_duration_names_the_key_and_the_forms(zh: Home) -> None:
    _write(zh, "zen: 1\nsupervisor:\n  kill_grace: soon\n")
    with pytest.raises(ZenError) as exc:
        Config.load(zh).seconds("supervisor", "kill_grace")
    assert _one_line(exc.value) == "zen.yaml supervisor.kill_grace: 'soon' is not a duration (try 90s, 30m, 1h30m, 7d)"


def test_a_negative_duration_is_refused(zh: Home) -> None:
    _write(zh, "zen: 1\nretry:\n  backoff_base: -5\n")
    with pytest.raises(ZenError, match=r"^zen.yaml retry.backoff_base: -5 is negative$"):
        Config.load(zh).seconds("retry", "backoff_base")


def test_a_boolean_is_no_duration(zh: Home) -> None:
    _write(zh, "zen: 1\nsupervisor:\n  tick: true\n")
    with pytest.raises(ZenError, match=r"^zen.yaml supervisor.tick: True is not a duration$"):
        Config.load(zh).seconds("supervisor", "tick")


def test_a_bad_size_names_the_key_and_the_forms(zh: Home) -> None:
    _write(zh, "zen: 1\nlimits:\n  max_prompt_size: huge\n")
    with pytest.raises(ZenError) as exc:
        Config.load(zh).size("limits", "max_prompt_size")
    assert _one_line(exc.value) == ("zen.yaml limits.max_prompt_size: 'huge' is not a size "
                                    "(try 200000, 512KiB, 1MiB, 2GiB)")


def test_invalid_yaml_is_one_line_naming_the_file(zh: Home) -> None:
    _write(zh, "zen: 1\nlanes: {app: [unclosed\n")
    with pytest.raises(ZenError) as exc:
        Config.load(zh)
    msg = _one_line(exc.value)
    assert msg.startswith(f"{zh.config_path} is not valid YAML: ")


def test_a_tab_indented_yaml_is_one_line_too(zh: Home) -> None:
    _write(zh, "zen: 1\nsupervisor:\n\tkill_grace: 5s\n")
    with pytest.raises(ZenError) as exc:
        Config.load(zh)
    assert _one_line(exc.value).startswith(f"{zh.config_path} is not valid YAML")


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_a_zen_yaml_that_is_no_mapping_is_refused(zh: Home, text: str) -> None:
    _write(zh, text)
    with pytest.raises(ZenError) as exc:
        Config.load(zh)
    assert _one_line(exc.value) == f"{zh.config_path} must be a mapping"


def test_a_newer_format_version_is_refused_by_name(zh: Home) -> None:
    _write(zh, "zen: 2\n")
    with pytest.raises(ZenError) as exc:
        Config.load(zh)
    assert _one_line(exc.value) == f"{zh.config_path} has format version 2; this zen reads version 1"


def test_an_unknown_lane_names_the_known_ones(zh: Home) -> None:
    _write(zh, "zen: 1\nlanes:\n  web: {path: /w}\n  api: {path: /a}\n")
    with pytest.raises(NotFound) as exc:
        Config.load(zh).lane("app")
    assert _one_line(exc.value) == "no lane named 'app' (known lanes: api, web; add one with zen lane add)"


def test_an_unknown_lane_in_a_home_with_none(zh: Home) -> None:
    with pytest.raises(NotFound, match=r"known lanes: none yet"):
        Config.load(zh).lane("app")


# -- lanes and agents -------------------------------------------------------------------------------

def test_lanes_are_plain_dicts_with_string_names(zh: Home) -> None:
    _write(zh, "zen: 1\nlanes:\n  app: {path: ~/src/app, base: main}\n  2024: {path: /old}\n  bare:\n")
    cfg = Config.load(zh)
    assert cfg.lanes == {"app": {"path": "~/src/app", "base": "main"}, "2024": {"path": "/old"}, "bare": {}}
    assert cfg.lane("2024") == {"path": "/old"}
    assert lane_path(cfg.lane("app")) == Path.home() / "src" / "app"


def test_agent_settings_of_an_unlisted_agent_are_empty(zh: Home) -> None:
    cfg = Config.load(zh)
    assert cfg.agent_settings("claude")["command"] == "claude"
    assert cfg.agent_settings("nobody") == {}


def test_a_callers_copy_is_its_own(zh: Home) -> None:
    first = Config.load(zh)
    first.data["defaults"]["agent"] = "changed in memory"
    assert Config.load(zh).get("defaults", "agent") == "sim"


# -- the caches ----------------------------------------------------------------------------------------

def test_an_edit_on_disk_is_seen_by_the_next_load(zh: Home) -> None:
    assert Config.load(zh).get("supervisor", "max_concurrent_tasks") == 5
    text = zh.config_path.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 7")
    _write(zh, text)
    assert Config.load(zh).get("supervisor", "max_concurrent_tasks") == 7


def test_an_edit_of_the_same_size_is_seen_too(zh: Home) -> None:
    Config.load(zh)
    text = zh.config_path.read_text().replace("max_concurrent_tasks: 5", "max_concurrent_tasks: 6")
    _write(zh, text)
    assert Config.load(zh).get("supervisor", "max_concurrent_tasks") == 6


def test_the_file_cache_is_used_while_zen_yaml_holds_its_text(zh: Home, no_memory: None) -> None:
    cache = zh.logs / CACHE_FILE
    saved = json.loads(cache.read_text())
    assert saved["v"] == config.CACHE_VERSION and saved["text"] == zh.config_path.read_text()
    saved["data"]["defaults"] = {"agent": "from-the-cache"}
    cache.write_text(json.dumps(saved))
    assert Config.load(zh).get("defaults", "agent") == "from-the-cache"


def test_a_file_cache_of_another_text_is_ignored(zh: Home, no_memory: None) -> None:
    cache = zh.logs / CACHE_FILE
    saved = json.loads(cache.read_text())
    saved["data"]["defaults"] = {"agent": "stale"}
    cache.write_text(json.dumps(saved))
    _write(zh, zh.config_path.read_text() + "\n# a comment changes the text\n")
    assert Config.load(zh).get("defaults", "agent") == "sim"


@pytest.mark.parametrize("damage", [
    "", "{", "null", "[]", '{"v": 999, "text": "", "data": {}}', '{"v": 1, "text": "x", "data": []}',
])
def test_a_corrupt_file_cache_is_ignored(zh: Home, no_memory: None, damage: str) -> None:
    (zh.logs / CACHE_FILE).write_text(damage)
    assert Config.load(zh).get("defaults", "agent") == "sim"


def test_a_cache_whose_data_is_no_mapping_is_ignored_even_with_the_right_text(zh: Home, no_memory: None) -> None:
    text = zh.config_path.read_text()
    (zh.logs / CACHE_FILE).write_text(json.dumps({"v": 1, "text": text, "data": ["not", "a", "map"]}))
    assert Config.load(zh).get("defaults", "agent") == "sim"


def test_a_cached_parse_is_still_checked_for_its_version(zh: Home, no_memory: None) -> None:
    text = zh.config_path.read_text()
    (zh.logs / CACHE_FILE).write_text(json.dumps({"v": 1, "text": text, "data": {"zen": 3}}))
    with pytest.raises(ZenError, match="has format version 3"):
        Config.load(zh)


def test_read_commands_never_write_the_cache(zh: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    (zh.logs / CACHE_FILE).unlink()
    monkeypatch.setattr(config, "_CACHE", {})
    Config.load(zh)
    assert not (zh.logs / CACHE_FILE).exists()
    monkeypatch.setattr(config, "_CACHE", {})    # the supervisor: another process
    Config.load(zh, keep=True)
    assert (zh.logs / CACHE_FILE).exists()


def test_a_parse_that_is_not_plain_data_is_never_cached(zh: Home, no_memory: None) -> None:
    (zh.logs / CACHE_FILE).unlink()
    _write(zh, "zen: 1\nwhen: 2026-12-01 10:00:00\n")     # a YAML timestamp: no JSON for it
    cfg = Config.load(zh, keep=True)
    assert cfg.data["when"].year == 2026
    assert not (zh.logs / CACHE_FILE).exists()


def test_a_home_without_zen_yaml_is_a_file_error_for_the_caller(tmp_path: Path) -> None:
    home = Home(tmp_path / "bare")
    with pytest.raises(FileNotFoundError):
        Config.load(home)


# -- edit_config -----------------------------------------------------------------------------------

def test_edit_config_keeps_the_comments_and_publishes_the_change(zh: Home) -> None:
    def add_lane(cfg: Config) -> None:
        cfg.data["lanes"]["app"] = {"path": "/src/app", "base": "main"}

    edit_config(zh, add_lane)
    text = zh.config_path.read_text()
    assert "# Lanes: the git repositories agents work on." in text
    assert "# agents alive at once; more tasks wait in the queue" in text
    assert Config.load(zh).lane("app") == {"path": "/src/app", "base": "main"}


def test_edit_config_leaves_the_new_parse_in_the_file_cache(zh: Home, no_memory: None) -> None:
    edit_config(zh, lambda cfg: cfg.data["defaults"].__setitem__("agent", "codex"))
    saved = json.loads((zh.logs / CACHE_FILE).read_text())
    assert saved["text"] == zh.config_path.read_text()
    assert saved["data"]["defaults"]["agent"] == "codex"


def test_edit_config_reads_the_file_not_a_stale_cache(zh: Home) -> None:
    cache = zh.logs / CACHE_FILE
    saved = json.loads(cache.read_text())
    saved["data"]["lanes"] = {"ghost": {"path": "/nowhere"}}
    cache.write_text(json.dumps(saved))
    edit_config(zh, lambda cfg: cfg.data["lanes"].__setitem__("real", {"path": "/r"}))
    assert set(Config.load(zh).lanes) == {"real"}


def test_a_change_that_raises_leaves_zen_yaml_as_it_was(zh: Home) -> None:
    before = zh.config_path.read_bytes()

    def broken(cfg: Config) -> None:
        cfg.data["lanes"]["half"] = {}
        raise ZenError("refused")

    with pytest.raises(ZenError, match="refused"):
        edit_config(zh, broken)
    assert zh.config_path.read_bytes() == before


def test_edit_config_on_a_broken_zen_yaml_is_the_parse_error(zh: Home) -> None:
    _write(zh, "zen: [\n")
    with pytest.raises(ZenError, match="is not valid YAML"):
        edit_config(zh, lambda cfg: None)
    assert zh.config_path.read_text() == "zen: [\n"


def test_concurrent_edits_are_all_kept(zh: Home) -> None:
    def add(i: int) -> None:
        edit_config(zh, lambda cfg: cfg.data["lanes"].__setitem__(f"lane{i}", {"path": f"/src/{i}"}))

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(Config.load(zh).lanes) == {f"lane{i}" for i in range(6)}
    assert "# Lanes:" in zh.config_path.read_text()


def test_unicode_survives_an_edit(zh: Home) -> None:
    edit_config(zh, lambda cfg: cfg.data["lanes"].__setitem__("café", {"path": "/src/日本"}))
    assert Config.load(zh).lane("café") == {"path": "/src/日本"}


def test_the_default_config_text_is_what_init_wrote(zh: Home) -> None:
    assert zh.config_path.read_text() == DEFAULT_CONFIG
