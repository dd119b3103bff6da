"""The guardian policy as a user meets it: broken files deny everything (naming the file),
incident rules take effect on the next call without a restart, the shipped incidents deny what
they were written for, and the policy extends (never weakens) the built-in floor."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from zen.guard.api import Context, ToolCall
from zen.guard.decide import decide
from zen.guard.policy.load import integrations, load_policy, load_policy_errors, validate_rules

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "policy").mkdir()
    shutil.copy(REPO / "policy" / "guardian.yaml", tmp_path / "policy" / "guardian.yaml")
    shutil.copy(REPO / "policy" / "autonomy.yaml", tmp_path / "policy" / "autonomy.yaml")
    shutil.copytree(REPO / "incidents", tmp_path / "incidents")
    (tmp_path / "worktrees" / "J").mkdir(parents=True)
    return tmp_path


def ctx(home: Path) -> Context:
    """At act-and-report, where pushes are allowed at all: the incidents must still hold there."""
    wt = str(home / "worktrees" / "J")
    return Context(cwd=wt, worktree=wt, home=str(home), user_home="/u", job_id="J",
                   env={"HOME": "/u"}, level="act-and-report")


def check(home: Path, command: str):
    policy, _ = load_policy(str(home))
    return decide(ToolCall("Bash", command=command), ctx(home), policy)


def bump(path: Path) -> None:
    """Make sure a rewrite changes the stat key even on coarse-mtime filesystems."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_shipped_policy_compiles_cleanly(home: Path) -> None:
    assert load_policy_errors(home) == []
    policy, autonomy = load_policy(str(home))
    assert policy.invalid is None
    assert autonomy["default_level"] == "suggest"
    assert check(home, "ls -la").allowed


def test_yaml_syntax_error_denies_everything_naming_the_file(home: Path) -> None:
    g = home / "policy" / "guardian.yaml"
    g.write_text(g.read_text() + "\nrules: [\n  - id: x\n")
    for command in ("ls", "echo hi", "git status"):
        d = check(home, command)
        assert d.decision == "deny" and d.rule == "policy.invalid"
        assert "policy/guardian.yaml" in d.reason
    assert any("policy/guardian.yaml" in e for e in load_policy_errors(home))
    d = decide(ToolCall.from_hook("Write", {"file_path": str(home / "worktrees/J/a.py"), "content": "x"}),
               ctx(home), load_policy(str(home))[0])
    assert d.rule == "policy.invalid"


def test_schema_error_denies_everything_naming_the_file(home: Path) -> None:
    g = home / "policy" / "guardian.yaml"
    g.write_text(g.read_text().replace("vendor_clis: []", "vendor_clis: []\nallow_everything: true"))
    d = check(home, "ls")
    assert d.rule == "policy.invalid" and "policy/guardian.yaml" in d.reason and "allow_everything" in d.reason
    g.write_text(g.read_text().replace("allow_everything: true", "require_approval: {file_deletes: maybe}"))
    bump(g)
    d = check(home, "ls")
    assert d.rule == "policy.invalid" and "guardian.yaml" in d.reason


def test_a_broken_incident_rule_denies_everything_naming_the_incident(home: Path) -> None:
    inc = home / "incidents" / "2099-01-01-bad.yaml"
    inc.write_text("zen: 1\nid: bad\ncontrols:\n  guardian_rules:\n    - id: no-reason\n      match: {command: [x]}\n")
    d = check(home, "ls")
    assert d.rule == "policy.invalid" and "incidents/2099-01-01-bad.yaml" in d.reason
    assert any("2099-01-01-bad.yaml" in e for e in load_policy_errors(home))
    inc.unlink()
    assert check(home, "ls").allowed          # fixed: the next call recompiles


def test_fixing_the_file_restores_service_without_restart(home: Path) -> None:
    g = home / "policy" / "guardian.yaml"
    good = g.read_text()
    g.write_text("zen: 1\nrules: {")
    assert check(home, "ls").rule == "policy.invalid"
    g.write_text(good)
    bump(g)
    assert check(home, "ls").allowed


def test_new_incident_rule_takes_effect_on_the_next_load(home: Path) -> None:
    assert check(home, "make deploy-staging").allowed
    (home / "incidents" / "2099-02-02-deploy.yaml").write_text(
        "zen: 1\nid: 2099-02-02-deploy\ntitle: t\ncontrols:\n  guardian_rules:\n"
        "    - id: incident.no-staging-deploy\n"
        "      reason: make deploy-staging pushed a broken build once\n"
        "      match: {command: [make], subcommand: [deploy-staging]}\n")
    d = check(home, "make deploy-staging")
    assert d.decision == "deny" and d.rule == "incident.no-staging-deploy"
    assert "2099-02-02-deploy" in d.reason
    assert check(home, "make test").allowed
    # editing the same file (stat changes) is picked up too
    p = home / "incidents" / "2099-02-02-deploy.yaml"
    p.write_text(p.read_text().replace("subcommand: [deploy-staging]", "subcommand: [test]"))
    bump(p)
    assert check(home, "make deploy-staging").allowed
    assert check(home, "make test").rule == "incident.no-staging-deploy"


def test_the_compiled_cache_is_reused_and_keyed_on_sources(home: Path) -> None:
    check(home, "ls")
    cache = home / "logs" / ".guard-cache.json"
    assert cache.is_file()
    before = cache.stat().st_mtime_ns
    time.sleep(0.01)
    check(home, "ls")
    assert cache.stat().st_mtime_ns == before        # unchanged sources: no recompile


@pytest.mark.parametrize("command,rule", [
    ("git push origin main", "incident.push-protected-branch"),
    ("git push origin HEAD:release/2.4", "incident.push-protected-branch"),
    ("git push upstream feature:production", "incident.push-protected-branch"),
    ("env > debug.log", "incident.secrets-into-log"),
    ("set -x; ./deploy.sh > deploy.log 2>&1", "incident.secrets-into-log"),
    ("echo \"key=$STRIPE_KEY\" >> logs/debug.log", "incident.secrets-into-log"),
    ("cp .env.example .env", "incident.redirect-into-env-file"),
    ("echo 'A=1' >> .env", "incident.redirect-into-env-file"),
    ("prisma migrate reset --force", "incident.prisma-reset"),
    ("npx prisma db push --force-reset", "incident.prisma-reset"),
    ("rails db:drop", "incident.rails-db-drop"),
    ("bin/rails db:schema:load", "incident.rails-db-drop"),
    ("python manage.py flush --noinput", "incident.django-flush"),
    ("alembic downgrade base", "incident.alembic-downgrade-base"),
])
def test_shipped_incidents_deny_what_they_were_written_for(home: Path, command: str, rule: str) -> None:
    d = check(home, command)
    assert d.decision == "deny" and d.rule == rule, d.as_dict()
    assert "(incident 20" in d.reason


@pytest.mark.parametrize("command", [
    "git push origin my-branch", "git push -u origin zen/J", "./deploy.sh > deploy.log 2>&1",
    "pytest -q > test.log", "cat .env.example", "prisma migrate dev", "rails db:migrate",
    "python manage.py migrate", "alembic upgrade head", "alembic downgrade -1",
])
def test_shipped_incidents_leave_ordinary_work_alone(home: Path, command: str) -> None:
    assert check(home, command).allowed, check(home, command).as_dict()


def test_incident_rule_for_file_tools(home: Path) -> None:
    policy, _ = load_policy(str(home))
    log = str(home / "worktrees/J/debug.log")
    bad = ToolCall.from_hook("Write", {"file_path": log, "content": "AWS key AKIAABCDEFGHIJKLMNOP"})
    assert decide(bad, ctx(home), policy).rule == "incident.secret-value-in-log"
    ok = ToolCall.from_hook("Write", {"file_path": log, "content": "request took 20ms"})
    assert decide(ok, ctx(home), policy).allowed


def test_policy_extends_the_floor_but_cannot_weaken_it(home: Path) -> None:
    g = home / "policy" / "guardian.yaml"
    text = g.read_text().replace("  payments: []", "  payments: [pay.internal.example]").replace(
        "high_consequence_hosts:", "high_consequence_hosts:", 1)
    text = text.replace("rules: []", """rules:
  - id: no-prod-psql
    reason: production database needs a human
    decision: approval
    match: {command: [psql], args: ["*prod*"]}
  - id: no-migration-edits
    reason: migrations are reviewed by the data team
    match: {path: ["migrations/**"]}""")
    g.write_text(text)
    assert check(home, "curl https://pay.internal.example/x").rule == "net.high-consequence"
    assert check(home, "curl https://api.stripe.com/v1/x").rule == "net.high-consequence"  # floor stays
    d = check(home, "psql -h db-prod-1 -c 'select 1'")
    assert d.decision == "approval" and d.rule == "no-prod-psql"
    assert check(home, "echo x > migrations/001.sql").rule == "no-migration-edits"
    policy, _ = load_policy(str(home))
    w = ToolCall.from_hook("Edit", {"file_path": str(home / "worktrees/J/migrations/001.sql"), "new_string": "x"})
    assert decide(w, ctx(home), policy).rule == "no-migration-edits"


def test_integrations_and_gate_reason(home: Path) -> None:
    g = home / "policy" / "guardian.yaml"
    g.write_text(g.read_text().replace("integrations: {}", """integrations:
  billing:
    base_url: https://billing.example.net/api
    methods: [GET, POST]
    credential: {env: BILLING_TOKEN}
    category: payments"""))
    items = integrations(home)
    assert [(i["name"], i["credential_env"]) for i in items] == [("billing", "BILLING_TOKEN")]
    d = check(home, "curl -X POST https://billing.example.net/api/refunds")
    assert d.rule == "net.high-consequence" and "zen gate billing" in d.reason


def test_validate_rules() -> None:
    assert validate_rules([{"id": "a", "reason": "r", "match": {"command": ["x"]}}], source="inc") == []
    errors = validate_rules([{"id": "a", "reason": "r", "match": {"nope": ["x"]}},
                             {"id": "b", "match": {"command": ["x"]}},
                             {"id": "c", "reason": "r", "match": {"text": ["("]}},
                             {"id": "d", "reason": "r", "decision": "allow", "match": {"command": ["x"]}}],
                            source="inc-1")
    assert len(errors) == 4 and all(e.startswith("inc-1") for e in errors)
    assert "nope" in errors[0]


def test_autonomy_error_is_reported(home: Path) -> None:
    a = home / "policy" / "autonomy.yaml"
    a.write_text(a.read_text().replace("default_level: suggest", "default_level: reckless"))
    assert any("autonomy.yaml" in e for e in load_policy_errors(home))
    assert check(home, "ls").rule == "policy.invalid"


def test_protected_paths_extend_self_protection(home: Path) -> None:
    g = home / "policy" / "guardian.yaml"
    g.write_text(g.read_text().replace("protected_paths: []", 'protected_paths: ["vendor/**", "~/shared-notes"]'))
    assert check(home, "rm -rf vendor/lib").rule == "policy.protected-path"
    assert check(home, "echo x > vendor/a.txt").rule == "policy.protected-path"
    assert check(home, "cat vendor/a.txt").allowed
    assert check(home, "rm -rf build").allowed
