"""The pure core: models, ids, durations, state transitions, decisions. No I/O lives here."""
