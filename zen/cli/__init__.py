"""The command line: parse, call orchestration, render, return an exit code."""
