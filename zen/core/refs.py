"""Resolve what a user typed into a job id: full id, unique prefix, or unique name (like git)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from zen.errors import Ambiguous, NotFound


def resolve(ref: str, names: Mapping[str, str], *, what: str = "job") -> str:
    """`names` maps job id -> task name. Returns the one id `ref` means or raises."""
    ref = ref.strip()
    if not ref:
        raise NotFound(f"no {what} given")
    if ref in names:
        return ref
    by_prefix = [i for i in names if i.startswith(ref)]
    if len(by_prefix) == 1:
        return by_prefix[0]
    by_name = [i for i, n in names.items() if n == ref]
    if len(by_name) == 1:
        return by_name[0]
    candidates = sorted(set(by_prefix) | set(by_name))
    if candidates:
        shown = ", ".join(candidates[:8]) + (" ..." if len(candidates) > 8 else "")
        raise Ambiguous(f"{what} {ref!r} is ambiguous: it could be {shown}")
    raise NotFound(f"no {what} matches {ref!r} (zen status lists them)")


def resolve_many(refs: Iterable[str], names: Mapping[str, str]) -> list[str]:
    return [resolve(r, names) for r in refs]
