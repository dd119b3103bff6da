"""zen init --fast / zen config fast-setup, and the circuit breaker's per-kind limits."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers import zen, zen_json
from tests.teams.conftest import tune
from zen.orchestration.home.fastsetup import PRESET, leaves
from zen.orchestration.read.schedule import try_automatic_start
from zen.orchestration.safety import breaker
from zen.store.config import _DEFAULTS, Config
from zen.store.home import Home


def test_fast_setup_fills_only_missing_fields_in_one_save_and_keeps_the_users_own(home: Path) -> None:
    cfg = home / "zen.yaml"
    text = cfg.read_text()
    start, end = text.index("# Agent teams"), text.index("# Per-agent settings")
    text = text[:start] + text[end:]                                    # no teams section at all
    text = text.replace("  leases: true              # false: no leases are taken or enforced\n", "")
    text = text.replace("conflict_resolution: deny", "conflict_resolution: warn  # mine: keep it")
    cfg.write_text("# my home, my notes\n" + text)
    r = zen("config", "fast-setup", "--json")
    assert r.returncode == 0, r.stderr
    filled = json.loads(r.stdout)["filled"]
    assert "teams.max_active_workers" in filled and "coordinator.leases" in filled
    assert "coordinator.conflict_resolution" not in filled
    after = cfg.read_text()
    assert after.startswith("# my home, my notes\n") and "conflict_resolution: warn  # mine: keep it" in after
    c = Config.load(Home(home))
    assert c.get("teams", "max_active_workers") == 4 and c.get("coordinator", "leases") is True
    assert c.agent_settings("claude")["permission_mode"] == "acceptEdits"
    again = zen("config", "fast-setup")
    assert again.returncode == 0 and "nothing changed" in again.stdout and cfg.read_text() == after


def test_the_preset_widens_nothing_it_is_zens_defaults_or_stricter() -> None:
    for path, value in leaves(PRESET):
        default = _DEFAULTS
        for key in path:
            default = default.get(key, {}) if isinstance(default, dict) else {}
        if default != {}:
            assert value == default, path                          # never a value looser than the default
    agents = PRESET["agents"]
    assert agents["claude"]["permission_mode"] == "acceptEdits"     # not bypassPermissions
    assert agents["codex"]["sandbox"] == "workspace-write" and agents["codex"]["approval"] == "on-request"
    assert PRESET["coordinator"]["leases"] is True and PRESET["coordinator"]["conflict_resolution"] == "deny"
    assert PRESET["teams"]["recovery"] == "manual" and PRESET["supervisor"]["auto_cleanup"] is False


def test_init_fast_writes_the_preset_into_a_new_home(tmp_path: Path) -> None:
    r = zen("init", "--fast", str(tmp_path / "h"))
    assert r.returncode == 0 and "recommended preset" in r.stdout, r.stderr
    c = Config.load(Home(tmp_path / "h"))
    assert c.agent_settings("codex")["sandbox"] == "workspace-write"


def test_each_kind_of_automatic_work_has_its_own_limit_and_the_breaker_state_shows(home: Path) -> None:
    tune(home, **{"    spawn: 20 ": "    spawn: 2 ", "    recovery: 5 ": "    recovery: 1 "})
    h = Home(home)
    cfg = Config.load(h)
    now = time.time()
    assert breaker.try_kind(h, cfg, breaker.SPAWN, now) is None
    assert breaker.try_kind(h, cfg, breaker.SPAWN, now + 1) is None
    until = breaker.try_kind(h, cfg, breaker.SPAWN, now + 2)
    assert until is not None and until == now + 2 + 15 * 60          # opened for breaker.hold
    assert breaker.try_kind(h, cfg, breaker.CONTINUATION, now + 3) is None   # another kind is not held
    assert breaker.try_kind(h, cfg, breaker.RECOVERY, now + 3) is None
    assert breaker.try_kind(h, cfg, breaker.RECOVERY, now + 4) is not None
    status = zen_json("status")["breaker"]["kinds"]                  # read back by another process
    assert status["spawn"] == {"count": 2, "limit": 2, "open": True, "resumes_at": until}
    assert status["continuation"]["open"] is False and status["continuation"]["count"] == 1
    # the automatic starts the scheduler counts are kept beside the kinds, and the reverse
    assert try_automatic_start(h, cfg, now + 5)
    assert breaker.status(h, cfg, now + 5)["spawn"]["open"] is True
