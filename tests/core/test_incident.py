"""Incident records: what a valid record is, and which jobs an incident concerns."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic import ValidationError

from zen.core.incident import INCIDENT_VERSION, Incident, PreflightCheck


def record(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "2026-03-14-force-push",
        "title": "An agent force-pushed main",
        "date": "2026-03-14",
        "domain": "code",
        "what_happened": "main was rewritten",
        "root_cause": "push was allowed",
        "impact": "two hours lost",
        "prevention": "deny force pushes",
    }
    base.update(over)
    return base


def test_a_minimal_record_parses_with_empty_controls() -> None:
    inc = Incident.model_validate(record())
    assert inc.zen == INCIDENT_VERSION and inc.date == date(2026, 3, 14)
    assert inc.lanes == [] and inc.paths == [] and not inc.example
    assert inc.controls.guardian_rules == [] and inc.controls.preflight_checks == []


def test_another_format_version_is_refused_with_the_supported_one() -> None:
    with pytest.raises(ValidationError, match=f"version 2 is not supported .*reads {INCIDENT_VERSION}"):
        Incident.model_validate(record(zen=2))


@pytest.mark.parametrize("bad", ["Force-Push", "ab", "has space", "-lead", "a/b", "x" * 90])
def test_ids_are_lower_case_words_and_dashes(bad: str) -> None:
    with pytest.raises(ValidationError, match="lower-case letters"):
        Incident.model_validate(record(id=bad))


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="severity"):
        Incident.model_validate(record(severity="high"))
    with pytest.raises(ValidationError):
        Incident.model_validate(record(controls={"guardian_rules": [], "alerts": []}))


def test_a_required_field_missing_is_named() -> None:
    data = record()
    del data["root_cause"]
    with pytest.raises(ValidationError, match="root_cause"):
        Incident.model_validate(data)


@pytest.mark.parametrize(("kind", "field", "value"), [
    ("env_absent", "var", "AWS_PROFILE"),
    ("env_present", "var", "CI"),
    ("file_absent", "path", ".env.prod"),
    ("file_present", "path", "Makefile"),
    ("command", "run", "test -d .git"),
])
def test_each_check_kind_needs_its_field(kind: str, field: str, value: str) -> None:
    check = PreflightCheck.model_validate({"id": "c1", "kind": kind, "description": "d", field: value})
    assert getattr(check, field) == value and check.severity == "fail" and check.timeout_s == 10.0
    with pytest.raises(ValueError, match=f"needs `{field}`"):
        PreflightCheck.model_validate({"id": "c1", "kind": kind, "description": "d"})
    with pytest.raises(ValueError, match=f"needs `{field}`"):
        PreflightCheck.model_validate({"id": "c1", "kind": kind, "description": "d", field: ""})


def test_check_kinds_and_severities_are_a_closed_set() -> None:
    with pytest.raises(ValidationError):
        PreflightCheck.model_validate({"id": "c", "kind": "network", "description": "d", "run": "x"})
    with pytest.raises(ValidationError):
        PreflightCheck.model_validate({"id": "c", "kind": "command", "description": "d", "run": "x",
                                       "severity": "error"})


def test_a_check_pattern_must_be_a_regular_expression() -> None:
    ok = PreflightCheck.model_validate({"id": "c", "kind": "env_absent", "description": "d", "var": "DB_URL",
                                        "pattern": r"prod\d+"})
    assert ok.pattern == r"prod\d+"
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        PreflightCheck.model_validate({"id": "c", "kind": "env_absent", "description": "d", "var": "X",
                                       "pattern": "([unclosed"})


def test_controls_carry_checks_as_models() -> None:
    inc = Incident.model_validate(record(controls={
        "guardian_rules": [{"deny": "git push --force"}],
        "preflight_checks": [{"id": "no-prod", "kind": "env_absent", "description": "d", "var": "PROD"}],
        "handoff_warnings": ["never force-push"],
    }))
    assert isinstance(inc.controls.preflight_checks[0], PreflightCheck)
    assert inc.controls.handoff_warnings == ["never force-push"]


# -- which jobs an incident concerns ------------------------------------------------------

def inc(**over: Any) -> Incident:
    return Incident.model_validate(record(**over))


def test_an_incident_without_lanes_concerns_its_whole_domain() -> None:
    i = inc(domain="infra")
    assert i.matches("any-lane", "infra")
    assert not i.matches("any-lane", "code")
    assert not i.matches(None, None)


def test_an_incident_with_lanes_concerns_those_lanes_only() -> None:
    i = inc(domain="code", lanes=["app", "api"])
    assert i.matches("app", "code") and i.matches("api", "infra")
    assert not i.matches("web", "code")  # same domain, other lane


@pytest.mark.parametrize(("glob", "path", "hit"), [
    ("src/auth/*", "src/auth/login.py", True),
    ("src/auth/", "src/auth/login.py", True),
    ("src/auth", "src/auth/login.py", True),
    ("*.tf", "infra/main.tf", True),
    ("src/auth/*", "src/billing/x.py", False),
    ("src/auth", "src/authz.py", False),
])
def test_paths_match_by_glob_or_folder(glob: str, path: str, hit: bool) -> None:
    i = inc(domain="infra", lanes=["other"], paths=[glob])
    assert i.matches("app", "code", [path]) is hit


def test_paths_match_only_when_the_job_names_paths() -> None:
    i = inc(domain="infra", lanes=["other"], paths=["src/*"])
    assert not i.matches("app", "code", None)
    assert not i.matches("app", "code", [])
