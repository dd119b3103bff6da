"""Agent adapters: how to start each agent CLI, and how it signals turns (one module each)."""
