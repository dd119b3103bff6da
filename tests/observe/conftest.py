"""The supervisor suite's fixtures (a fast home with lane 'app', real `zen supervise`), shared."""

from tests.supervisor.conftest import sup, sups, zh  # noqa: F401
