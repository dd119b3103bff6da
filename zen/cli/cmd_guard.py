"""zen guard check / settings / hook, zen approvals / approve / deny, zen gate.

`check` and `check --batch` go through the same Guard.check as the hook (zen/guard/context.py),
so a command gets the same answer from a shell, a batch file and an agent.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer

from zen.cli import common
from zen.errors import UsageError, ZenError


def _home_root() -> str | None:
    """The home as --home / $ZEN_HOME / discovery give it, or None when there is none."""
    h = common.home_or_none()
    if h is None and (common._home_option or os.environ.get("ZEN_HOME")):
        common.home()                       # raises the one-sentence NoHome error
    return str(h.root) if h is not None else None


def _zen_argv() -> list[str]:
    script = Path(sys.executable).parent / "zen"
    return [str(script)] if script.exists() else [sys.executable, "-m", "zen"]


def _exit_for(decision: str) -> int:
    return 0 if decision == "allow" else 4


def register(app: typer.Typer) -> None:
    guard = typer.Typer(help="The guardian: check commands and file edits against the policy.",
                        no_args_is_help=True)
    app.add_typer(guard, name="guard")

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
        from zen.guard.api import ToolCall
        from zen.guard.context import Guard

        home = _home_root()
        if batch is not None:
            if command or tool or file:
                raise UsageError("--batch takes its commands from the file, not from the command line")
            return _batch(home, batch, cwd)
        if tool and tool != "Bash":
            if command:
                raise UsageError(f"--tool {tool} takes --file PATH, not a command")
            if not file:
                raise UsageError(f"--tool {tool} needs --file PATH")
            target = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(file)))
            fields = {"file_path": target}
            if content is not None:
                fields["content"] = content
            call = ToolCall.from_hook(tool, fields)
        else:
            if not command:
                raise UsageError("give the command after --, e.g. zen guard check -- 'rm -rf build'")
            text = " ".join(command)
            call = ToolCall(tool="Bash", command=text, raw={"command": text})
        d = Guard(home=home).safe_check(call, cwd or os.getcwd(), worktree, audit=True)
        if json_out:
            common.emit_json(d.as_dict())
        elif d.allowed:
            common.say(f"allow ({d.rule}): {d.reason}")
        else:
            common.say(f"{d.decision} ({d.rule}): {d.reason}")
        return _exit_for(d.decision)

    @guard.command("settings")
    def settings() -> int:
        """Print the Claude Code settings JSON that registers zen's hooks (the guardian included)."""
        from zen.agents.settings import settings_text

        sys.stdout.write(settings_text(_zen_argv()))
        return 0

    @guard.command("hook", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def hook(ctx: typer.Context) -> int:
        """The PreToolUse hook (reads the agent's JSON on stdin; exit 0 allow, 2 block)."""
        from zen.guard.hook import main as hook_main

        argv = list(ctx.args)
        if common._home_option and "--home" not in argv:
            argv += ["--home", common._home_option]
        return hook_main(argv)

    @app.command("approvals")
    def approvals_cmd(json_out: bool = typer.Option(False, "--json")) -> int:
        """Approval requests: pending (waiting for you), granted (not used yet), denied."""
        from zen.guard import approvals

        rows = approvals.listing(str(common.home().root))
        if json_out:
            common.emit_json(rows)
            return 0
        if not rows:
            common.say("no approval requests")
            return 0
        common.table(["id", "state", "job", "tool", "what", "rule", "created"],
                     [[r.get("id", ""), r["state"], r.get("job") or "-", r.get("tool", ""),
                       _short(r.get("command") if r.get("command") is not None else r.get("file_path")),
                       r.get("rule", ""), r.get("created_at", "")] for r in rows])
        if any(r["state"] == "pending" for r in rows):
            common.say("zen approve ID allows the call once; zen deny ID refuses it")
        return 0

    def _decide(aid: str, verdict: str, json_out: bool) -> int:
        from zen.guard import approvals

        try:
            rec = approvals.decide_request(str(common.home().root), aid, verdict)
        except approvals.ApprovalError as exc:
            raise ZenError(str(exc)) from None
        if json_out:
            common.emit_json(rec)
        elif verdict == "granted":
            common.say(f"approved {rec.get('id', aid)}: the same call from the same job is allowed once")
        else:
            common.say(f"denied {rec.get('id', aid)}: the call stays blocked")
        return 0

    @app.command("approve")
    def approve(aid: str = typer.Argument(..., metavar="ID"), json_out: bool = typer.Option(False, "--json")) -> int:
        """Grant a pending approval: the same call from the same job is allowed once."""
        return _decide(aid, "granted", json_out)

    @app.command("deny")
    def deny(aid: str = typer.Argument(..., metavar="ID"), json_out: bool = typer.Option(False, "--json")) -> int:
        """Refuse a pending approval: the call stays denied."""
        return _decide(aid, "denied", json_out)

    @app.command("gate")
    def gate_cmd(
        name: str = typer.Argument(..., help="The integration (policy/guardian.yaml integrations)."),
        method: str = typer.Argument(..., help="GET, POST, ..."),
        path: str = typer.Argument(..., help="The path under the integration's base URL, e.g. /v1/items."),
        data: str = typer.Option(None, "--data", "-d", help="The request body: JSON text, or @FILE."),
        json_out: bool = typer.Option(False, "--json", help="Print {integration, method, path, status, body}."),
        timeout: float = typer.Option(30.0, "--timeout", help="Seconds to wait for the answer."),
    ) -> int:
        """Call a listed integration through its gate (the only sanctioned way); exit 0 on 2xx."""
        from zen.guard import gate

        body: bytes | None = None
        if data is not None:
            if data.startswith("@"):
                try:
                    body = Path(data[1:]).expanduser().read_bytes()
                except OSError as exc:
                    raise ZenError(f"cannot read {data[1:]} ({exc.strerror})") from None
            else:
                body = data.encode()
        try:
            resp = gate.call(_home_root(), name, method, path, body, timeout=timeout)
        except gate.GateError as exc:
            raise ZenError(str(exc)) from None
        text = resp.body.decode("utf-8", "replace")
        if json_out:
            try:
                parsed = json.loads(text) if text.strip() else None
            except ValueError:
                parsed = text
            common.emit_json({"integration": resp.integration, "method": resp.method, "path": resp.path,
                              "status": resp.status, "body": parsed})
        else:
            sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
            if not resp.ok:
                common.err(f"zen gate: {name} answered {resp.status}")
        return 0 if resp.ok else 1


def _short(text: object, width: int = 60) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= width else s[: width - 1] + "…"


def _batch(home: str | None, source: str, default_cwd: str | None) -> int:
    """One JSON decision per input line (zen/guard/batch.py, also reached without the CLI)."""
    from zen.guard.batch import run

    try:
        return run(source, default_cwd, home)
    except OSError as exc:
        raise ZenError(f"cannot read {source} ({exc.strerror})") from None
