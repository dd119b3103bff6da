"""zen guard check | settings | hook | serve.

`check` and `check --batch` go through the same Guard.check as the hook (zen/guard/context.py),
so a command gets the same answer from a shell, a batch file and an agent.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import typer

from zen.agents.common import zen_argv
from zen.agents.settings import settings_text
from zen.cli import common, render
from zen.coord.guardcheck import check_writes
from zen.errors import UsageError, ZenError
from zen.guard.api import Decision, ToolCall
from zen.guard.batch import run as run_batch
from zen.guard.context import Guard
from zen.guard.hook import main as hook_main
from zen.orchestration.job.guardian import serve as serve_main

guard = typer.Typer(help="The guardian: check commands and file edits against the policy.", no_args_is_help=True)


def _call(command: list[str] | None, cwd: str | None, tool: str | None, file: str | None,
          content: str | None) -> ToolCall:
    if tool and tool != "Bash":
        if command:
            raise UsageError(f"--tool {tool} takes --file PATH, not a command")
        if not file:
            raise UsageError(f"--tool {tool} needs --file PATH")
        target = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(file)))
        fields = {"file_path": target}
        if content is not None:
            fields["content"] = content
        return ToolCall.from_hook(tool, fields)
    if not command:
        raise UsageError("give the command after --, e.g. zen guard check -- 'rm -rf build'")
    text = " ".join(command)
    return ToolCall(tool="Bash", command=text, raw={"command": text})


def _decided(d: Decision) -> Iterator[render.Out]:
    yield render.clean(f"{'allow' if d.allowed else d.decision} ({d.rule}): {d.reason}")


@guard.command("check")
def check(
    command: list[str] = typer.Argument(None, help="The command (after --), e.g. -- 'rm -rf build'."),
    json_out: bool = typer.Option(False, "--json", help="Print {decision, rule, reason}."),
    cwd: str = typer.Option(None, "--cwd", help="The directory the command runs in (default: here)."),
    worktree: str = typer.Option(None, "--worktree", help="The job's worktree (default: $ZEN_WORKTREE, "
                                 "else the <home>/worktrees/<x> holding the cwd)."),
    tool: str = typer.Option(None, "--tool", help="A file tool (Write, Edit, MultiEdit, NotebookEdit)."),
    file: str = typer.Option(None, "--file", help="The file the tool writes (with --tool)."),
    content: str = typer.Option(None, "--content", help="The text the tool writes (with --tool)."),
    batch: str = typer.Option(None, "--batch", help="A JSONL file (- for stdin): one decision per line."),
) -> int:
    """Ask the guardian about a command or a file edit: exit 0 allow, 4 deny or approval."""
    home = common.home_root_or_none()
    if batch is not None:
        if command or tool or file:
            raise UsageError("--batch takes its commands from the file, not from the command line")
        try:
            return run_batch(batch, cwd, home)
        except OSError as exc:
            raise ZenError(f"cannot read {batch} ({exc.strerror})") from None
    # with the coordinator's lease check, as in the hook (a job's write to a file another holds)
    d = Guard(home=home, writes_check=check_writes).safe_check(_call(command, cwd, tool, file, content),
                                                               cwd or os.getcwd(), worktree, audit=True)
    render.emit(d, json_out, _decided)
    return 0 if d.decision == "allow" else 4


@guard.command("settings")
def settings() -> int:
    """Print the Claude Code settings JSON that registers zen's hooks (the guardian included)."""
    sys.stdout.write(settings_text(zen_argv()))
    return 0


@guard.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def hook(ctx: typer.Context) -> int:
    """The PreToolUse hook: reads the agent's tool call as JSON on stdin and answers in the agent's
    protocol (exit 0 allow, exit 2 block with the reason on stderr). Agents run it; `zen guard
    check` asks the same question from a shell."""
    argv = list(ctx.args)
    home = common.home_option()
    if home and "--home" not in argv:
        argv += ["--home", home]
    return hook_main(argv)


@guard.command("serve")
def serve(
    parent: int = typer.Option(None, "--parent", help="Stop when this process (the supervisor that "
                               "started the server) ends."),
) -> int:
    """The resident guardian of the home: hook calls hand their question to it (on
    control/guard.sock) instead of loading the guardian each time, and decide alone whenever it
    is absent, slow or stopped. The supervisor runs one; stop it with SIGTERM or Ctrl-C."""
    home = common.home().root
    argv = ["--home", str(home)] + (["--parent", str(parent)] if parent is not None else [])
    return serve_main(argv, writes_check=lambda: check_writes)


def register(app: typer.Typer) -> None:
    app.add_typer(guard, name="guard")
