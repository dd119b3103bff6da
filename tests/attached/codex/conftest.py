"""`zen run codex` reuses tests/codex's fixtures: the real Codex CLI against its scripted API."""

from tests.codex.conftest import api, codex_env, codex_home, needs_codex  # noqa: F401  (fixtures reused)
