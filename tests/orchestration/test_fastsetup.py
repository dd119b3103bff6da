"""The recommended preset (zen.orchestration.home.fastsetup) on zen.yaml files a user has shaped:
what is filled, what is kept byte for byte, that a second run changes nothing, and a section
that is not a mapping refused in one line with nothing saved."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import one_line
from zen.errors import ZenError
from zen.orchestration.home.fastsetup import PRESET, fast_setup, leaves, missing
from zen.store.config import Config
from zen.store.home import Home


def test_leaves_walks_every_setting_with_its_dotted_path() -> None:
    got = dict(leaves({"a": {"b": 1, "c": {"d": 2}}, "e": 3}))
    assert got == {("a", "b"): 1, ("a", "c", "d"): 2, ("e",): 3}
    assert ("breaker", "limits", "spawn") in dict(leaves(PRESET))


@pytest.mark.parametrize(("data", "path", "want"), [
    ({"a": {"b": 1}}, ("a", "b"), False),
    ({"a": {"b": None}}, ("a", "b"), False),     # set to null by the user: theirs, not missing
    ({"a": {}}, ("a", "b"), True),
    ({}, ("a", "b"), True),
    ({"a": 5}, ("a", "b"), True),
])
def test_missing_means_absent_not_empty(data: dict[str, object], path: tuple[str, ...], want: bool) -> None:
    assert missing(data, path) is want


def test_a_second_run_fills_nothing_and_leaves_the_file_as_it_was(home: Path) -> None:
    h = Home(home)
    assert fast_setup(h)
    text = (home / "zen.yaml").read_text()
    assert fast_setup(h) == []
    assert (home / "zen.yaml").read_text() == text


def test_a_minimal_zen_yaml_gets_every_preset_field_and_keeps_its_comment(home: Path) -> None:
    (home / "zen.yaml").write_text("# mine: keep this\nzen: 1\nlanes: {}\n")
    h = Home(home)
    filled = fast_setup(h)
    assert set(filled) == {".".join(p) for p, _ in leaves(PRESET)}
    text = (home / "zen.yaml").read_text()
    assert text.startswith("# mine: keep this\n")
    cfg = Config.load(h)
    for path, value in leaves(PRESET):
        node = cfg.data
        for key in path:
            node = node[key]
        assert node == value, path


def test_a_users_own_values_and_sections_stay(home: Path) -> None:
    (home / "zen.yaml").write_text("zen: 1\nlanes: {}\nteams:\n  max_active_workers: 1  # tight\n"
                                   "agents:\n  claude:\n    command: /opt/claude\n")
    filled = fast_setup(Home(home))
    assert "teams.max_active_workers" not in filled and "agents.claude.command" not in filled
    assert "agents.claude.permission_mode" in filled
    text = (home / "zen.yaml").read_text()
    assert "max_active_workers: 1  # tight" in text and "command: /opt/claude" in text


def test_a_section_that_is_not_a_mapping_is_refused_naming_it_and_nothing_is_saved(home: Path) -> None:
    (home / "zen.yaml").write_text("zen: 1\nlanes: {}\nteams: 5\n")
    before = (home / "zen.yaml").read_bytes()
    with pytest.raises(ZenError) as exc:
        fast_setup(Home(home))
    assert one_line(str(exc.value)) and "zen.yaml teams is 5" in str(exc.value)
    assert (home / "zen.yaml").read_bytes() == before
