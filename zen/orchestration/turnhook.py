"""`zen hook EVENT`: agents' turn signals (Stop, Notification, ...) appended to the job timeline."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    return 0
