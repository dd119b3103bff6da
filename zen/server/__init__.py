"""`zen serve` (DESIGN section 11): the HTTP API under `/api/v1/agent/` and the web dashboard at
`/agent`, with its static assets shipped in this package.

A view and a control surface over the same files: every write goes through the orchestration
code the CLI uses, so a task created over HTTP is a task file in the spool.
"""
