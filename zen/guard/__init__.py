"""The guardian: a fail-closed policy on every shell command and file edit (DESIGN section 5)."""
