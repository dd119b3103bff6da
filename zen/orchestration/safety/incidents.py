"""Incident records on disk: load, validate, create, and the handoff warnings that match a job."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML

from zen.core.ids import iso, slugify, utcnow
from zen.core.incident import Incident
from zen.errors import NotFound, ZenError
from zen.guard.policy.load import validate_rules
from zen.orchestration.safety.autonomy import demote
from zen.store.atomic import create_exclusive
from zen.store.home import Home
from zen.store.jobs import describe_validation


@dataclass
class Loaded:
    path: Path
    incident: Incident | None
    error: str | None


def _load_one(path: Path) -> Loaded:
    try:
        data = YAML(typ="safe").load(path.read_text())
    except Exception as exc:
        return Loaded(path, None, f"not valid YAML: {str(exc).splitlines()[0]}")
    if not isinstance(data, dict):
        return Loaded(path, None, "not an incident record (expected a mapping)")
    try:
        return Loaded(path, Incident.model_validate(data), None)
    except (ValidationError, ValueError) as exc:
        msg = describe_validation(exc) if isinstance(exc, ValidationError) else str(exc)
        return Loaded(path, None, msg)


_LOADED: dict[tuple[object, ...], Loaded] = {}


def load_all(home: Home) -> list[Loaded]:
    """Every record, each parsed again only when its file changed (the supervisor asks per spawn)."""
    out = []
    for p in sorted(home.incidents.glob("*.yaml")):
        try:
            st = p.stat()
        except OSError:
            continue
        key = (str(p), st.st_mtime_ns, st.st_size, st.st_ino)
        hit = _LOADED.get(key)
        if hit is None:
            hit = _LOADED[key] = _load_one(p)
        out.append(hit)
    if len(_LOADED) > 1024:
        _LOADED.clear()
    return out


def valid(home: Home) -> list[Incident]:
    return [x.incident for x in load_all(home) if x.incident is not None]


def get(home: Home, ref: str) -> tuple[Path, Incident]:
    hits = [x for x in load_all(home) if x.incident is not None and
            (x.incident.id == ref or x.incident.id.startswith(ref) or x.path.stem == ref)]
    exact = [x for x in hits if x.incident is not None and x.incident.id == ref]
    hits = exact or hits
    if not hits:
        raise NotFound(f"no incident matches {ref!r} (zen incident list shows them)")
    if len(hits) > 1:
        raise ZenError(f"incident {ref!r} is ambiguous: " + ", ".join(x.incident.id for x in hits if x.incident))
    assert hits[0].incident is not None
    return hits[0].path, hits[0].incident


@dataclass(frozen=True)
class Summary:
    """One line of `zen incident list`: a record and how many live controls it carries."""

    id: str
    file: str
    title: str | None
    date: str | None
    domain: str | None
    guardian_rules: int
    preflight_checks: int
    handoff_warnings: int
    error: str | None


def summaries(home: Home) -> list[Summary]:
    out = []
    for item in load_all(home):
        inc = item.incident
        if inc is None:
            out.append(Summary(item.path.stem, item.path.name, None, None, None, 0, 0, 0, item.error))
        else:
            c = inc.controls
            out.append(Summary(inc.id, item.path.name, inc.title, str(inc.date), inc.domain,
                               len(c.guardian_rules), len(c.preflight_checks), len(c.handoff_warnings), None))
    return out


@dataclass(frozen=True)
class Checked:
    path: str
    id: str | None
    ok: bool
    problems: list[str]


def check(home: Home) -> list[Checked]:
    """Validate every record and compile its guardian rules with the guardian's own compiler."""
    results = []
    for item in load_all(home):
        problems = [item.error] if item.error else []
        if item.incident is not None:
            problems += compile_rules(item.incident)
        results.append(Checked(str(item.path), item.incident.id if item.incident else None, not problems, problems))
    return results


def compile_rules(incident: Incident) -> list[str]:
    """Errors from compiling the incident's guardian rules (empty when they all compile)."""
    if not incident.controls.guardian_rules:
        return []
    return [f"guardian rule: {e}" for e in validate_rules(incident.controls.guardian_rules, source=incident.id)]


def create(home: Home, fields: dict[str, Any]) -> Path:
    """Write a new incident record (validated first; never overwrites)."""
    data = {k: v for k, v in fields.items() if v not in (None, [], "")}
    data.setdefault("date", utcnow().date().isoformat())
    data.setdefault("id", f"{data['date']}-{slugify(str(data.get('title', 'incident')), 48)}")
    data["recorded_at"] = iso(utcnow())
    data["zen"] = 1
    try:
        incident = Incident.model_validate(data)
    except ValidationError as exc:
        raise ZenError(f"incident: {describe_validation(exc)}") from None
    errors = compile_rules(incident)
    if errors:
        raise ZenError(f"incident {incident.id}: {errors[0]}")
    out = incident.model_dump(mode="json", exclude_none=True)
    out = {"zen": out.pop("zen"), **out}
    buf = io.StringIO()
    y = YAML()
    y.default_flow_style = False
    y.width = 100
    y.dump(out, buf)
    path = home.incidents / f"{incident.id}.yaml"
    if not create_exclusive(path, f"# incident record (zen incident show {incident.id})\n" + buf.getvalue()):
        raise ZenError(f"{path} already exists; choose another --id")
    return path


@dataclass(frozen=True)
class Recorded:
    path: Path
    id: str
    domain: str
    demoted_to: str | None


def record(home: Home, fields: dict[str, Any], *, demote_domain: bool = True) -> Recorded:
    """`zen incident new`: write the record, then demote its domain one level (unless told not to)."""
    path = create(home, fields)
    _, incident = get(home, path.stem)
    demoted = demote(home, incident.domain, reason=f"incident {incident.id}").label if demote_domain else None
    return Recorded(path, incident.id, incident.domain, demoted)


def warnings_for(home: Home, lane: str | None, domain: str | None, paths: list[str] | None = None) -> list[Incident]:
    return [i for i in valid(home) if i.matches(lane, domain, paths) and
            (i.controls.handoff_warnings or i.controls.guardian_rules)]
