"""The `zen` entry point.

Two commands run inside every agent action and must start fast, so they bypass the CLI
framework: `zen guard hook` (the PreToolUse guardian) and `zen hook EVENT` (turn signals); so
does `zen guard check --batch`, a throughput tool. Any other form goes through the full CLI.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv[:2] == ["guard", "hook"]:
        from zen.guard.hook import main as guard_hook

        sys.exit(guard_hook(argv[2:]))
    if argv[:2] == ["guard", "check"] and "--batch" in argv:
        from zen.guard.batch import fast_main

        rc = fast_main(argv[2:])
        if rc is not None:
            sys.exit(rc)
    if argv[:1] == ["hook"] and len(argv) >= 2 and not argv[1].startswith("-"):
        from zen.orchestration.turnhook import main as turn_hook

        sys.exit(turn_hook(argv[1:]))
    from zen.cli.main import main as cli_main

    sys.exit(cli_main(argv))


if __name__ == "__main__":
    main()
