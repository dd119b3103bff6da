"""`zen run gemini` reuses tests/gemini's fixtures: the real Gemini CLI against its scripted API."""

from tests.gemini.conftest import api, gemini_env, gemini_home, needs_gemini  # noqa: F401  (fixtures reused)
