"""Jobs as a forest (DESIGN 13): every worker under the job that spawned it. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any


def forest(nodes: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Nodes with `id` and `parent` nested as {..., "children": [...]}; a node whose parent is
    not among them is a root. Order is kept (each list in the order the nodes came)."""
    by_id: dict[str, dict[str, Any]] = {}
    for n in nodes:
        by_id.setdefault(str(n["id"]), {**n, "children": []})
    roots: list[dict[str, Any]] = []
    for node in by_id.values():
        parent = by_id.get(str(node.get("parent") or ""))
        if parent is not None and parent is not node:
            parent["children"].append(node)
        else:
            roots.append(node)
    return roots


def walk(roots: Iterable[Mapping[str, Any]], depth: int = 0) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(depth, node) depth first, parents before their workers."""
    for node in roots:
        yield depth, node
        yield from walk(node.get("children") or [], depth + 1)
