"""Live views in the terminal (DESIGN section 12): `zen watch`, a Textual app driven by file
events on the timelines, and its plain rich fallback. `zen grid` and the tmux status segment
live in the CLI and the tmux adapter.
"""
