"""`zen guard hook`: the PreToolUse hook. Until the guardian lands it blocks everything (exit 2):
failing closed is the only safe default."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    try:
        sys.stdin.read()
    except BaseException:
        pass
    sys.stderr.write("zen guardian: not installed yet; blocking (fail closed)\n")
    return 2
