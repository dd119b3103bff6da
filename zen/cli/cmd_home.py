"""zen init, zen lane add|list|remove."""

from __future__ import annotations

from pathlib import Path

import typer

from zen.cli import common


def register(app: typer.Typer) -> None:
    @app.command("init")
    def init(
        directory: Path = typer.Argument(Path("."), help="Where to create the home (default: here)."),
        json_out: bool = typer.Option(False, "--json", help="Print what was created as JSON."),
    ) -> int:
        """Create a zen home (idempotent: never overwrites a file you may have edited)."""
        from zen.store.home import init_home

        home, created = init_home(directory)
        if json_out:
            common.emit_json({"home": str(home.root), "created": created})
        else:
            if created:
                common.say(f"initialised zen home at {home.root} ({len(created)} entries created)")
            else:
                common.say(f"zen home at {home.root} is already complete; nothing changed")
            common.say(f"next: export ZEN_HOME={home.root}; zen lane add NAME /path/to/repo")
        return 0

    lane = typer.Typer(help="Register the git repositories agents work on.", no_args_is_help=True)
    app.add_typer(lane, name="lane")

    @lane.command("add")
    def lane_add(
        name: str = typer.Argument(..., help="Short name, e.g. app."),
        path: str = typer.Argument(..., help="Path of the repository's main checkout."),
        base: str = typer.Option(None, "--base", help="Branch worktrees start from (default: the checked-out branch)."),
        domain: str = typer.Option(None, "--domain", help="Autonomy domain of the lane (default: code)."),
        setup: str = typer.Option(None, "--setup", help="Command run in each new worktree, e.g. 'npm ci'."),
        include: list[str] = typer.Option([], "--include", help="Untracked file to copy into each worktree (repeatable)."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Register a lane (refuses a path that is not a git repository or a base that does not resolve)."""
        from zen.orchestration.lanes import add_lane

        spec = add_lane(common.home(), name, path, base, domain, setup, include)
        if json_out:
            common.emit_json(spec)
        else:
            common.say(f"lane {name}: {spec['path']} (base {spec['base']}, domain {spec['domain']})")
        try:
            from zen.agents.claude_trust import trust_note

            note = trust_note(Path(spec["path"]), name)
        except ImportError:
            note = None
        if note and not json_out:
            common.err(note)
        return 0

    @lane.command("list")
    def lane_list(json_out: bool = typer.Option(False, "--json")) -> int:
        """List lanes."""
        from zen.orchestration.lanes import list_lanes
        from zen.store.config import Config

        lanes = list_lanes(Config.load(common.home()))
        if json_out:
            common.emit_json(lanes)
        elif not lanes:
            common.say("no lanes yet (zen lane add NAME PATH)")
        else:
            common.table(["lane", "path", "base", "domain"],
                         [[x["name"], x.get("path", ""), x.get("base", ""), x.get("domain", "")] for x in lanes])
        return 0

    @lane.command("trust")
    def lane_trust(
        name: str = typer.Argument(..., help="Lane whose repository Claude Code should trust."),
        json_out: bool = typer.Option(False, "--json"),
    ) -> int:
        """Record in ~/.claude.json that Claude Code trusts the lane (its worktrees are covered too)."""
        from zen.agents.claude_trust import claude_json, trust
        from zen.orchestration.lanes import get_lane
        from zen.store.config import Config, lane_path

        repo = lane_path(get_lane(Config.load(common.home()), name))
        changed = trust(repo)
        if json_out:
            common.emit_json({"lane": name, "path": str(repo), "trusted": True, "changed": changed})
        elif changed:
            common.say(f"Claude Code now trusts {repo} (recorded in {claude_json()})")
        else:
            common.say(f"Claude Code already trusts {repo}; nothing changed")
        return 0

    @lane.command("remove")
    def lane_remove(name: str = typer.Argument(...)) -> int:
        """Forget a lane (its repository, worktrees and branches are untouched)."""
        from zen.orchestration.lanes import remove_lane

        remove_lane(common.home(), name)
        common.say(f"lane {name} removed")
        return 0
