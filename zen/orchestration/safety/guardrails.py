"""policy/guardian.yaml as the dashboard's Guardrails tab shows and edits it (DESIGN section 11).

An edit is either the whole file (the human's text, comments and all) or a few keys merged into
it through ruamel's round trip, which keeps every comment. Either way the candidate is compiled
by the guardian's own policy compiler before anything is written; a candidate that does not
compile is refused with its one-sentence error and the file is left as it was. The compiled
policy is always the built-in floor plus the file (zen.guard.policy.defaults), and the file's schema
has no way to remove a built-in, so a valid file can only add to the floor. The write is
atomic (temp, fsync, rename) and compare-and-set on the file's sha256 when the caller says
which version it edited.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path
from typing import Any

from zen.errors import Conflict, PolicyRefused
from zen.guard.policy import load as gpolicy
from zen.store.atomic import atomic_write, flocked
from zen.store.home import Home

MAX_BYTES = 1_000_000


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def current_text(home: Home) -> str:
    try:
        return home.guardian_policy.read_text()
    except FileNotFoundError:
        return ""


def _yaml() -> Any:
    from ruamel.yaml import YAML  # 30 ms, and only an edit of the policy needs it

    y = YAML()
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def merge_changes(text: str, changes: dict[str, Any]) -> str:
    """`changes` merged into the YAML `text` (mappings key by key, anything else replaced),
    comments kept; a null value removes the key."""
    y = _yaml()
    try:
        doc = y.load(text) if text.strip() else None
    except Exception as exc:
        raise PolicyRefused(f"policy/guardian.yaml is not valid YAML now, so it cannot be merged into: "
                            f"{str(exc).splitlines()[0]}") from None
    if doc is None:
        from ruamel.yaml.comments import CommentedMap  # with YAML above: only an edit needs it

        doc = CommentedMap()
    if not hasattr(doc, "items"):
        raise PolicyRefused("policy/guardian.yaml must be a mapping to merge changes into it")
    _merge(doc, changes)
    buf = io.StringIO()
    y.dump(doc, buf)
    return buf.getvalue()


def _merge(into: Any, changes: dict[str, Any]) -> None:
    for key, value in changes.items():
        if value is None:
            into.pop(key, None)
        elif isinstance(value, dict) and hasattr(into.get(key), "items"):
            _merge(into[key], value)
        else:
            into[key] = value


def check(home: Home, text: str) -> str | None:
    """The guardian compiler's verdict on `text` as the home's guardian.yaml: None when it
    compiles (with the home's autonomy policy and incidents), else its one-sentence error."""
    if len(text.encode()) > MAX_BYTES:
        return f"the policy is larger than {MAX_BYTES // 1000} kB"
    home.policy.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=home.policy, prefix=".guardian.candidate-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        sources = [[tmp, None, None, None, None]]
        sources += [[p, None, None, None, None] for p in gpolicy.source_paths(str(home.root))[1:]]
        compiled = gpolicy.compile_sources(str(home.root), sources)
    finally:
        Path(tmp).unlink(missing_ok=True)
    problem = compiled.get("invalid")
    if problem is None:
        return None
    # the compiler names the temp file; the human edits policy/guardian.yaml
    return str(problem).replace(os.path.relpath(tmp, home.root), os.path.relpath(home.guardian_policy, home.root))


def update(home: Home, *, text: str | None = None, changes: dict[str, Any] | None = None,
           expected_sha: str | None = None) -> dict[str, Any]:
    """Validate and publish a new guardian.yaml; PolicyRefused (nothing written) when it does not
    compile, Conflict when the file changed since `expected_sha`."""
    if (text is None) == (changes is None):
        raise PolicyRefused("give either the whole policy (yaml) or the changes to merge into it, not both")
    with flocked(home.guardian_edit_lock):
        old = current_text(home)
        if expected_sha is not None and expected_sha != sha(old):
            raise Conflict("policy/guardian.yaml changed since you read it; reload and edit again")
        new = text if text is not None else merge_changes(old, changes or {})
        problem = check(home, new)
        if problem is not None:
            raise PolicyRefused(problem)
        if new != old:
            atomic_write(home.guardian_policy, new)
    return {"path": str(home.guardian_policy), "sha": sha(new), "changed": new != old}


def summary(home: Home) -> dict[str, Any]:
    """The file, whether it compiles, and what it switches on."""
    text = current_text(home)
    compiled = gpolicy.load_compiled(str(home.root))
    pol = compiled.get("policy") or {}
    return {"path": str(home.guardian_policy), "yaml": text, "sha": sha(text),
            "valid": compiled.get("invalid") is None, "error": compiled.get("invalid"),
            "require_approval": dict(pol.get("require_approval") or {k: False for k in gpolicy.APPROVAL_SWITCHES}),
            "rules": [{k: r.get(k) for k in ("id", "reason", "decision", "source", "incident")}
                      for r in pol.get("rules") or []]}


__all__ = ["PolicyRefused", "check", "merge_changes", "summary", "update"]
