"""The real agents' fixtures (tests/claude, tests/codex) for the wall's suite: each test here that
needs an agent binary is skipped, naming how to install it, when it is missing."""

from tests.claude.conftest import api, claude_env, claude_home, claude_lane, needs_claude  # noqa: F401
