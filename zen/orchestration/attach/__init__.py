"""`zen run AGENT ...`: an agent a human starts in their own terminal and checkout, as an attached
job (issue 39): a record and timeline like any job's (task.received says `kind: attached`), the
guardian and its wall, turn hooks, usage, leases and the kill switch; no worktree, no tmux of
zen's, nothing harvested. record.py keeps the job's timeline, launch.py says how each agent starts
with zen's hooks, run.py runs it in the foreground."""
