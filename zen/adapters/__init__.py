"""Adapters: one external system each (git, tmux, the filesystem watcher)."""
