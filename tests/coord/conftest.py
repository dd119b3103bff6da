"""The supervisor's fixtures (a home with lane `app` and fast timings, real `zen supervise`
processes killed afterwards), shared with tests/supervisor."""

from tests.supervisor.conftest import sup, sups, zh  # noqa: F401  (fixtures)
