"""What a start reads again and again (policy/autonomy.yaml, the policy sources the preflight
compiles) is kept parsed, and the next read after a file changed sees the change: a hand edit in
place, zen's own rewrite, a broken edit, a new incident. What one caller is handed to change
never leaks into what the others read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zen.core.model import Level
from zen.errors import ZenError
from zen.orchestration.job import preflight
from zen.orchestration.job.preflight import FAIL, PASS, WARN
from zen.orchestration.safety import autonomy
from zen.store.home import init_home
from zen.store.layout import Home


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h, _ = init_home(tmp_path / "zh")
    return h


def test_a_hand_edit_of_the_autonomy_policy_is_seen_on_the_next_start(home: Home) -> None:
    assert autonomy.domain_level(home, "infra") is Level.observe
    path = home.autonomy_policy
    before = path.stat()
    path.write_text(path.read_text().replace("  infra: observe", "  infra: suggest"))  # in place, same inode
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1))  # even within one clock tick
    assert autonomy.domain_level(home, "infra") is Level.suggest


def test_an_edit_of_the_same_size_and_time_is_seen_when_the_file_was_replaced(home: Home) -> None:
    assert autonomy.domain_level(home, "data") is Level.observe
    path = home.autonomy_policy
    st = path.stat()
    new = path.with_name("autonomy.yaml.new")
    new.write_text(path.read_text().replace("  data: observe", "  data: suggest"))
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert new.stat().st_size == st.st_size
    os.replace(new, path)                     # an editor's save: a new inode
    assert autonomy.domain_level(home, "data") is Level.suggest


def test_zen_s_own_change_of_a_level_is_seen(home: Home) -> None:
    assert autonomy.domain_level(home, "code") is Level.suggest
    autonomy.set_level(home, "code", Level.act_and_report)
    assert autonomy.domain_level(home, "code") is Level.act_and_report
    assert "act-and-report" in home.autonomy_policy.read_text() and "# Levels, lowest first" in \
        home.autonomy_policy.read_text()   # comments kept


def test_a_broken_edit_is_never_answered_with_the_level_read_before(home: Home) -> None:
    assert autonomy.domain_level(home, "code") is Level.suggest
    home.autonomy_policy.write_text("domains: [unclosed\n")
    assert autonomy.domain_level(home, "code") is None      # callers take their safe default
    with pytest.raises(ZenError, match="is not valid YAML"):
        autonomy.read_policy(home)


def test_the_copy_handed_out_to_change_is_not_what_others_read(home: Home) -> None:
    mine = autonomy.load_policy(home)
    mine["domains"]["code"] = "autonomous"
    mine["default_level"] = "autonomous"
    assert autonomy.domain_level(home, "code") is Level.suggest
    assert autonomy.domain_level(home, "elsewhere") is Level.suggest
    assert autonomy.read_policy(home)["domains"]["code"] == "suggest"


# a stand-in hook that decides as the guardian would on the preflight's two self-test commands
GOOD_HOOK = ["sh", "-c", "grep -q 'rm -rf' && exit 2; exit 0"]


def _guardian_check(home: Home) -> tuple[str, str]:
    report = preflight.run(home, hook_argv=GOOD_HOOK)
    return next((c.status, c.message) for c in report.checks if c.name == "guardian policy")


def test_the_preflight_sees_a_policy_edit_on_the_next_run(home: Home) -> None:
    assert _guardian_check(home)[0] == PASS
    assert _guardian_check(home)[0] == PASS            # the compile kept, nothing changed
    good = home.guardian_policy.read_text()
    home.guardian_policy.write_text(good + "rules: [unclosed\n")
    status, message = _guardian_check(home)
    assert status == FAIL and "guardian.yaml" in message
    home.guardian_policy.write_text(good)
    assert _guardian_check(home)[0] == PASS


def test_the_preflight_sees_a_new_incident_whose_rule_does_not_compile(home: Home) -> None:
    assert _guardian_check(home)[0] == PASS
    (home.incidents / "2026-12-01-bad.yaml").write_text(
        "zen: 1\nid: 2026-12-01-bad\ntitle: bad\ndate: 2026-12-01\ndomain: code\nsummary: s\n"
        "controls:\n  guardian_rules:\n  - {id: broken, match: {nonsense: 1}, decision: deny}\n")
    status, message = _guardian_check(home)
    assert status == FAIL and "2026-12-01-bad" in message


def _integrations_check(home: Home) -> tuple[str, str]:
    report = preflight.run(home, hook_argv=GOOD_HOOK)
    return next((c.status, c.message) for c in report.checks if c.name == "integrations")


def test_the_preflight_sees_an_integration_added_to_the_policy(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STRIPE_API_KEY", raising=False)
    assert _integrations_check(home) == (PASS, "0 integration gate(s) configured")
    g = home.guardian_policy
    g.write_text(g.read_text().replace("integrations: {}", "integrations:\n  stripe:\n"
                                       "    base_url: https://api.stripe.com\n    methods: [GET]\n"
                                       "    credential: {env: STRIPE_API_KEY}\n    auth: bearer\n"
                                       "    category: payments\n"))
    assert _integrations_check(home) == (WARN, "no credential in the environment for stripe")
    monkeypatch.setenv("STRIPE_API_KEY", "sk_test")   # the environment is looked at every time
    assert _integrations_check(home) == (PASS, "1 integration gate(s) configured")
