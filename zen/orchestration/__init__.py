"""Orchestration: the use cases that combine the store and the adapters (dispatch, lanes,
supervisor, harvest). The CLI calls these; they never print."""
