"""The coordinator's settings (zen/coord/settings.py): the guardian hook's lean line reader of
zen.yaml `coordinator:` (never weaker than the defaults, whatever the file holds) and the typed
Settings the supervisor and CLI use."""

from __future__ import annotations

from pathlib import Path

import pytest

from zen.coord import settings as cs
from zen.coord.settings import Settings, hook_settings, secret_value
from zen.errors import ZenError
from zen.store.home import Home


def home_with(tmp_path: Path, text: str, name: str = "zh") -> str:
    root = tmp_path / name
    root.mkdir(exist_ok=True)
    (root / "zen.yaml").write_text(text, encoding="utf-8")
    return str(root)


def hs(tmp_path: Path, text: str) -> tuple[bool, float, str]:
    got = hook_settings(home_with(tmp_path, text))
    return got.leases, got.lock_timeout_s, got.resolution


def test_defaults_without_a_file_or_a_block(tmp_path: Path) -> None:
    got = hook_settings(str(tmp_path / "none"))
    assert (got.leases, got.lock_timeout_s, got.resolution) == (True, 300.0, "deny")
    assert hs(tmp_path, "zen: 1\nlanes: {}\n") == (True, 300.0, "deny")


def test_the_block_is_read_line_by_line(tmp_path: Path) -> None:
    text = ("zen: 1\n# a comment\ncoordinator:\n  # leases: false\n  leases: off   # not now\n"
            "  lock_timeout: 90s\n  conflict_resolution: Warn\n  nested:\n    leases: true\n"
            "observatory:\n  leases: true\n")
    assert hs(tmp_path, text) == (False, 90.0, "warn")


@pytest.mark.parametrize("word,on", [("false", False), ("no", False), ("OFF", False), ("0", False),
                                     ("true", True), ("yes", True), ("maybe", True), ("", True)])
def test_only_a_clear_no_turns_leases_off(tmp_path: Path, word: str, on: bool) -> None:
    assert hs(tmp_path, f"coordinator:\n  leases: {word}\n")[0] is on


def test_an_unknown_resolution_or_timeout_keeps_enforcement_at_the_default(tmp_path: Path) -> None:
    assert hs(tmp_path, "coordinator:\n  conflict_resolution: allow-all\n  lock_timeout: soon\n") == \
        (True, 300.0, "deny")
    assert hs(tmp_path, "coordinator:\n  lock_timeout: 0.1s\n")[1] == 1.0      # never under a second


def test_the_first_spelling_of_a_key_wins(tmp_path: Path) -> None:
    assert hs(tmp_path, "coordinator:\n  conflict_resolution: warn\n  conflict_resolution: last-write-wins\n")[2] == "warn"


def test_a_flow_style_block_is_read_by_the_real_parser(tmp_path: Path) -> None:
    assert hs(tmp_path, "coordinator: {leases: false, lock_timeout: 2m, conflict_resolution: last-write-wins}\n") == \
        (False, 120.0, "last-write-wins")
    assert hs(tmp_path, "coordinator: {}\n") == (True, 300.0, "deny")
    assert hs(tmp_path, "coordinator: {leases: [unclosed\n") == (True, 300.0, "deny")   # unreadable: defaults


def test_a_file_that_is_not_utf8_gives_the_defaults(tmp_path: Path) -> None:
    root = tmp_path / "bin"
    root.mkdir()
    (root / "zen.yaml").write_bytes(b"coordinator:\n  leases: \xff\xfe false\n")
    got = hook_settings(str(root))
    assert got.leases is True and got.resolution == "deny"


def test_an_edit_is_seen_at_the_next_call(tmp_path: Path) -> None:
    root = home_with(tmp_path, "coordinator:\n  leases: true\n")
    assert hook_settings(root).leases is True
    (Path(root) / "zen.yaml").write_text("coordinator:\n  leases: false\n  lock_timeout: 5m\n")
    assert hook_settings(root).leases is False and hook_settings(root).lock_timeout_s == 300.0
    other = home_with(tmp_path, "coordinator:\n  conflict_resolution: warn\n", "other")
    assert hook_settings(other).resolution == "warn" and hook_settings(root).resolution == "deny"
    assert len(cs._CACHE) == 1                     # one file's reading is kept, not one per home ever


def test_secrets_may_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEN_TEST_HOOK_SECRET", "from-env")
    assert secret_value("env:ZEN_TEST_HOOK_SECRET") == "from-env"
    assert secret_value("env:ZEN_TEST_NOT_SET_ANYWHERE") == ""
    assert secret_value("plain") == "plain" and secret_value(None) == ""  # type: ignore[arg-type]


def test_typed_settings_and_their_defaults() -> None:
    s = Settings({})
    assert (s.leases, s.lock_timeout_s, s.resolution, s.scan_interval_s) == (True, 300.0, "deny", 3.0)
    assert s.webhook == "" and s.secret == "" and s.events == cs.WEBHOOK_EVENTS and s.lanes == ()
    assert (s.webhook_timeout_s, s.webhook_retries, s.webhook_backoff_s, s.webhook_backoff_cap_s) == \
        (10.0, 10, 2.0, 600.0)
    t = Settings({"lock_timeout": "0s", "scan_interval": 0, "webhook_retries": 0, "conflict_resolution": "nope",
                  "notification_events": [], "notification_lanes": ["app", 3], "notification_webhook": " http://x/ "})
    assert t.lock_timeout_s == 1.0 and t.scan_interval_s == 0.2 and t.webhook_retries == 1
    assert t.resolution == "deny" and t.events == () and t.lanes == ("app", "3") and t.webhook == "http://x/"


def test_a_bad_setting_in_zen_yaml_is_one_line_naming_the_section(tmp_path: Path) -> None:
    root = home_with(tmp_path, "zen: 1\ncoordinator:\n  webhook_backoff: forever\n")
    with pytest.raises(ZenError) as exc:
        Settings.load(Home(root))
    text = str(exc.value)
    assert text.startswith("zen.yaml coordinator: ") and "forever" in text and "\n" not in text
