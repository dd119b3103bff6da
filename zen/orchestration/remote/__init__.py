"""Turns on a Ray cluster (DESIGN section 14): the supervisor's side (submit, watch, settle,
recover, stop) and the worker's (`zen remote-turn`). The spool, the timelines, the review branches
and harvest stay exactly as for a local job; only where the agent runs changes."""
