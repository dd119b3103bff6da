"""zen lane add | list | trust | remove."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from zen.agents.trust import AGENTS, trust, trust_note
from zen.cli import common, render
from zen.cli.common import JSON
from zen.errors import UsageError, ZenError
from zen.orchestration.lanes import add_lane, get_lane, list_lanes, remove_lane, update_lane
from zen.orchestration.remote import lanes as remote_lanes
from zen.store.config import Config, lane_path

lane = typer.Typer(help="Register the git repositories agents work on.", no_args_is_help=True)


EXECUTOR = typer.Option(None, "--executor", help="Where the lane's agents run: local (tmux here, the default) "
                        "or ray (turns as jobs on a Ray cluster; needs --ray-address and --remote).")
RAY_ADDRESS = typer.Option(None, "--ray-address", help="The Ray cluster's job API, e.g. http://10.0.0.5:8265.")
RAY_RESOURCE = typer.Option([], "--ray-resource", help="A resource each turn reserves on a node, NAME=AMOUNT "
                            "(e.g. zen_slot=1; repeatable).")
CHECK = typer.Option([], "--check", help="A command run on each harvested job's work merged into the base, before "
                     "zen land lets it land (repeatable; e.g. 'make test').")
REMOTE = typer.Option(None, "--remote", help="The bare repository the cluster's nodes clone from and push to "
                      "(a path on a shared disk, or a URL).")


def _change(executor: str | None, ray_address: str | None, ray_resource: list[str],
            remote: str | None) -> remote_lanes.ExecutorChange:
    return remote_lanes.ExecutorChange(kind=executor, address=ray_address,
                                       resources=remote_lanes.parse_resources(ray_resource), remote=remote)


def _added(spec: Mapping[str, Any]) -> Iterator[render.Out]:
    yield f"lane {spec['name']}: {spec['path']} (base {spec['base']}, domain {spec['domain']})"
    if spec.get("executor"):
        yield f"  runs on {remote_lanes.describe(dict(spec))} (zen preflight checks it)"
    if spec.get("sandbox") == "off":
        yield render.Note("sandbox: off: this lane's agents run without an OS sandbox, so only the guardian's "
                          "parser stands between them and zen's home, other jobs and your secrets; its jobs "
                          "are shown as unguarded")
    elif spec.get("network"):
        yield f"  its agents' commands may reach: {', '.join(spec['network'])}"
    note = trust_note(Path(spec["path"]), str(spec["name"]))
    if note:
        yield render.Note(note)


@lane.command("add")
def lane_add(
    name: str = typer.Argument(..., help="Short name, e.g. app."),
    path: str = typer.Argument(..., help="Path of the repository's main checkout."),
    base: str = typer.Option(None, "--base", help="Branch worktrees start from (default: the checked-out branch)."),
    domain: str = typer.Option(None, "--domain", help="Autonomy domain of the lane (default: code)."),
    setup: str = typer.Option(None, "--setup", help="Command run in each new worktree, e.g. 'npm ci'."),
    include: list[str] = typer.Option([], "--include", help="Untracked file to copy into each worktree (repeatable)."),
    unguarded: str = typer.Option(None, "--unguarded", help="Agents without a pre-execution hook (aider): "
                                  "sandbox (default: inside zen's sandbox), accept (as they are), refuse."),
    unguarded_shell: bool = typer.Option(False, "--unguarded-shell",
                                         help="Let such agents run shell commands (aider's are off otherwise)."),
    sandbox: str = typer.Option(None, "--sandbox", help="on (the default: every agent inside an OS sandbox) or "
                                "off (none: the lane's jobs are shown as unguarded)."),
    network: list[str] = typer.Option([], "--network", help="A host (HOST or HOST:PORT) the agents' commands may "
                                      "reach besides the model's API (repeatable; none by default)."),
    check: list[str] = CHECK,
    executor: str = EXECUTOR,
    ray_address: str = RAY_ADDRESS,
    ray_resource: list[str] = RAY_RESOURCE,
    remote: str = REMOTE,
    json_out: bool = JSON,
) -> int:
    """Register a lane (refuses a path that is not a git repository or a base that does not resolve)."""
    change = _change(executor, ray_address, ray_resource, remote)
    extra = remote_lanes.apply({}, change, name) if not change.empty else None
    if sandbox is not None:
        if sandbox not in ("on", "off"):
            raise UsageError(f"--sandbox must be on or off, not {sandbox!r}")
        extra = {**(extra or {}), "sandbox": sandbox}
    if network:
        extra = {**(extra or {}), "network": list(network)}
    if check:
        extra = {**(extra or {}), "checks": [c for c in check if c.strip()]}
    spec = add_lane(common.home(), name, path, base, domain, setup, include, unguarded=unguarded,
                    unguarded_shell=unguarded_shell, extra=extra)
    render.emit(spec, json_out, _added)
    return 0


def _listed(lanes: list[dict[str, Any]]) -> Iterator[render.Out]:
    if not lanes:
        yield "no lanes yet (zen lane add NAME PATH)"
        return
    yield render.Table(["lane", "path", "base", "domain", "runs on"],
                       [[x["name"], x.get("path", ""), x.get("base", ""), x.get("domain", ""),
                         remote_lanes.describe(x)] for x in lanes])


@lane.command("list")
def lane_list(json_out: bool = JSON) -> int:
    """List lanes."""
    render.emit(list_lanes(Config.load(common.home())), json_out, _listed)
    return 0


@lane.command("set")
def lane_set(
    name: str = typer.Argument(..., help="The lane to change."),
    executor: str = EXECUTOR,
    ray_address: str = RAY_ADDRESS,
    ray_resource: list[str] = RAY_RESOURCE,
    remote: str = REMOTE,
    check: list[str] = CHECK,
    no_checks: bool = typer.Option(False, "--no-checks", help="Remove the lane's checks."),
    json_out: bool = JSON,
) -> int:
    """Change a lane's checks (--check, replacing them; --no-checks), or where its agents run (its
    executor) and its shared remote; jobs already started keep where they run."""
    change = _change(executor, ray_address, ray_resource, remote)
    if change.empty and not check and not no_checks:
        raise UsageError("say what to change: --check, --no-checks, --executor, --ray-address, --ray-resource "
                         "or --remote")
    if check and no_checks:
        raise UsageError("--check and --no-checks contradict each other; give one")
    home = common.home()
    if check or no_checks:
        spec = update_lane(home, name, {"checks": [c for c in check if c.strip()] if check else None})
    if not change.empty:
        spec = remote_lanes.set_lane(home, name, change)
    render.emit(spec, json_out, _set)
    return 0


def _set(s: dict[str, Any]) -> Iterator[render.Out]:
    yield f"lane {s['name']} runs on {remote_lanes.describe(s)}"
    for c in s.get("checks") or []:
        yield f"  check: {c}"


@dataclass(frozen=True)
class Trusted:
    lane: str
    path: str
    trusted: bool
    changed: bool
    agents: list[dict[str, Any]]      # per agent: agent, label, file, changed


def _trusted(r: Trusted) -> Iterator[render.Out]:
    for a in r.agents:
        if a["changed"]:
            yield f"{a['label']} now trusts {r.path} (recorded in {a['file']})"
        else:
            yield f"{a['label']} already trusts {r.path}; nothing changed"


@lane.command("trust")
def lane_trust(
    name: str = typer.Argument(..., help="Lane whose repository the agents should trust."),
    agent: list[str] = typer.Option([], "--agent", help="Only this agent (repeatable; default: all that ask)."),
    json_out: bool = JSON,
) -> int:
    """Record that Claude Code, Codex and Gemini CLI trust the lane, each in its own file
    (~/.claude.json, ~/.codex/config.toml, ~/.gemini/trustedFolders.json), so their jobs start
    without a trust screen; the lane's worktrees are covered too."""
    unknown = [a for a in agent if a not in AGENTS]
    if unknown:
        raise ZenError(f"--agent {unknown[0]!r} asks for no trust (one of {', '.join(AGENTS)})")
    repo = lane_path(get_lane(Config.load(common.home()), name))
    done = trust(repo, list(agent) or None)
    render.emit(Trusted(name, str(repo), True, any(d["changed"] for d in done), done), json_out, _trusted)
    return 0


@lane.command("remove")
def lane_remove(name: str = typer.Argument(..., help="The lane to forget.")) -> int:
    """Forget a lane (its repository, worktrees and branches are untouched)."""
    remove_lane(common.home(), name)
    render.emit(name, False, lambda n: [f"lane {n} removed"])
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(lane, name="lane")
