"""The real Codex CLI's fixtures (tests/codex) for the wall's suite: its own `api`, the Responses
API stand-in (the Claude tests beside this folder have the Messages API one)."""

from tests.codex.conftest import api, codex_env, codex_home, codex_lane, needs_codex  # noqa: F401
