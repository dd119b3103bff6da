"""The server suite reuses the supervisor suite's fixtures: a home with a fast lane (`zh`), real
`zen supervise` processes (`sups`, `sup`), and the catalogue check of every line written."""

from __future__ import annotations

from tests.supervisor.conftest import sup, sups, zh

__all__ = ["sup", "sups", "zh"]
