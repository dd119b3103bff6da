"""Fixtures for the live views: a home with a lane and fast supervisor timings, real supervisors."""

from __future__ import annotations

from tests.supervisor.conftest import Supervisors, make_fast, sup, sups, zh

__all__ = ["Supervisors", "make_fast", "sup", "sups", "zh"]
