"""The `zen` entry point.

Two commands run inside every agent action and must start fast, so they bypass the CLI
framework: `zen guard hook` (the PreToolUse guardian) and `zen hook EVENT` (turn signals); so
do `zen guard check --batch`, a throughput tool, and `zen guard serve`, the resident guardian.
Any other form, and --help of these, goes through the full CLI.
"""

from __future__ import annotations

import sys

from zen.store.layout import go_private

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing alone costs the thin hook (zen/guard/resident/client.py) a fifth of its start-up
    from typing import Any


def lease_check() -> object:
    """The coordinator's lease check for the guardian (DESIGN 10), handed to the hook, which
    calls it inside its fail-closed try: the guardian is a lower layer than the coordinator and
    cannot import it. Its modules load on the first call that writes (most calls write nothing)."""

    def check_writes(ctx: Any, call: Any, writes: Any, act: bool) -> Any:
        # here: loaded only when a call writes, and inside the hook's try (see above)
        from zen.coord.guardcheck import check_writes as check

        return check(ctx, call, writes, act)

    return check_writes


def main() -> None:
    argv = sys.argv[1:]
    go_private()  # every record zen writes is the user's alone (L16); agents get the user's umask back
    # `zen guard hook --help` (nothing else) is a person asking; agents never call it so. Any
    # other form is the hook itself, which must answer in the agent's protocol, fail-closed.
    asks_help = len(argv) == 3 and argv[2] in ("-h", "--help")
    if argv[:2] == ["guard", "hook"] and not asks_help:
        # lean start: the hook runs for every agent action and must not import the CLI
        from zen.guard import hook

        hook.leave(hook.main(argv[2:], writes_check=lease_check))
    if argv[:2] == ["guard", "serve"] and not asks_help:
        # lean start: the supervisor starts the resident guardian with every start of its own
        from zen.orchestration.job.guardian import serve as guard_serve

        sys.exit(guard_serve(argv[2:], writes_check=lease_check))
    if argv[:2] == ["guard", "check"] and "--batch" in argv:
        # lean start: a throughput tool, measured in bench/guard.py
        from zen.guard.batch import fast_main

        rc = fast_main(argv[2:])
        if rc is not None:
            sys.exit(rc)
    if argv[:1] == ["hook"] and len(argv) >= 2 and not argv[1].startswith("-") and not asks_help:
        # lean start: turn signals come from agent hooks, one process per signal
        from zen.orchestration.job.turnhook import main as turn_hook

        sys.exit(turn_hook(argv[1:]))
    fast = (["status"], ["show"], ["dispatch"])
    if argv[:1] in fast or (argv[:1] == ["--home"] and argv[2:3] in fast):
        # lean start: commands scripts run over and over, without typer (zen/cli/fast.py)
        from zen.cli.fast import main as fast_main

        rc = fast_main(argv)
        if rc is not None:
            sys.exit(rc)
    # imported only now, so that the fast paths above never load the CLI framework
    from zen.cli.main import main as cli_main

    sys.exit(cli_main(argv))


if __name__ == "__main__":
    main()
