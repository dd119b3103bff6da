"""How an attached agent starts: the user's own command line with zen's hooks and wall added.

    launch(home, cfg, job_id, where, agent, args) -> Launch(argv, env, files)

The agent's own arguments pass through unchanged, after what zen adds:

- claude: `--settings <job>/claude-settings.json`: the same settings file a dispatched job gets
  (zen.agents.settings: the guardian's PreToolUse hooks, the turn hooks, and Claude Code's sandbox
  as the wall unless the lane says `sandbox: off`); it layers above the user's own settings;
- codex: the hooks as `-c` overrides (zen.agents.codex) and its sandbox and approvals for the
  level, also as `-c` (sandbox_mode, approval_policy), so they hold for `codex exec` too;
- gemini: its own home for the session with zen's hooks in its settings ($GEMINI_CLI_HOME, as for
  a dispatched job; the user's ~/.gemini is linked into it);
- aider: no pre-execution hook; started as the lane allows such agents (zen.agents.unguarded):
  inside zen's sandbox, as it is (`unguarded: accept`), or refused; its notifications command is
  zen's turn hook and its shell commands are off unless the lane allows them, as when dispatched.

A wall that cannot stand here (Claude Code's sandbox without bubblewrap or socat) refuses the start
in one sentence, as the preflight of a dispatched job does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from zen.adapters.sandbox import run_dir_for
from zen.agents import get_adapter
from zen.agents.aider import shell_allowed
from zen.agents.base import LaunchContext
from zen.agents.codex import hook_overrides, permissions
from zen.agents.common import agent_command, settings_env, zen_argv, zen_command
from zen.agents.unguarded import mode as unguarded_mode
from zen.agents.unguarded import sandbox_argv
from zen.agents.unguarded import spawn_check as unguarded_check
from zen.agents.wall import enabled as wall_enabled
from zen.agents.wall import spawn_check as wall_check
from zen.errors import SpawnError, UsageError
from zen.guard.policy.levels import kill_switch_on
from zen.orchestration.attach.record import Place
from zen.orchestration.safety.autonomy import domain_level
from zen.store.config import Config
from zen.store.jobs import JobStore
from zen.store.layout import Home, JobPaths

AGENTS = ("claude", "codex", "gemini", "aider")


@dataclass
class Launch:
    argv: list[str]
    env: dict[str, str]
    files: dict[Path, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)     # told to the user before the agent starts


def start_level(home: Home, domain: str | None) -> str:
    """observe under the kill switch, else the domain's level (the home's default without a lane)."""
    if kill_switch_on(str(home.root)):
        return "observe"
    level = domain_level(home, domain)
    return level.label if level is not None else "suggest"


def base_env(cfg: Config, agent: str, home: Home, job_id: str, where: Place) -> dict[str, str]:
    """The user's own environment (their terminal's, tmux's included) without zen.yaml's
    agents.<name>.drop_env, plus its env and the job's context for the hooks."""
    settings = cfg.agent_settings(agent)
    env = dict(os.environ)
    for name in settings.get("drop_env") or []:
        env.pop(str(name), None)
    env.update(settings_env(settings))
    env.update({"ZEN_HOME": str(home.root), "ZEN_JOB_ID": job_id, "ZEN_WORKTREE": str(where.root)})
    return env


def context(home: Home, cfg: Config, job_id: str, where: Place, agent: str) -> LaunchContext:
    task = JobStore(home).task(job_id)
    paths = home.job(job_id)
    return LaunchContext(home=home.root, job_id=job_id, job_dir=paths.dir, worktree=where.root,
                         handoff=paths.handoff, task=task, zen_argv=zen_argv(),
                         settings=cfg.agent_settings(agent), repo=where.root, lane=dict(where.spec),
                         level=start_level(home, task.domain), wall=wall_enabled(where.spec))


def _claude(ctx: LaunchContext, args: list[str]) -> tuple[list[str], dict[str, str], dict[Path, str]]:
    spec = get_adapter("claude").launch(ctx)
    settings = JobPaths(ctx.job_dir).claude_settings
    return [*agent_command(ctx, "claude"), "--settings", str(settings), *args], spec.env, spec.files


def _codex(ctx: LaunchContext, args: list[str]) -> tuple[list[str], dict[str, str], dict[Path, str]]:
    sandbox, approval = permissions(ctx)
    overrides = [*hook_overrides(ctx), f'sandbox_mode="{sandbox}"', f'approval_policy="{approval}"',
                 "sandbox_workspace_write.exclude_slash_tmp=true"]
    argv = [*agent_command(ctx, "codex"), "--dangerously-bypass-hook-trust"]
    for item in overrides:
        argv += ["-c", item]
    return [*argv, *args], {}, {}


def _gemini(ctx: LaunchContext, args: list[str]) -> tuple[list[str], dict[str, str], dict[Path, str]]:
    spec = get_adapter("gemini").launch(ctx)
    return [*agent_command(ctx, "gemini"), *args], spec.env, spec.files


def _aider(ctx: LaunchContext, args: list[str], env: dict[str, str]) -> tuple[list[str], dict[str, str], dict[Path, str]]:
    # as for a dispatched aider: its turns told to zen, its shell commands off unless the lane allows them
    argv = [*agent_command(ctx, "aider"), "--notifications", "--notifications-command",
            zen_command(ctx, "hook", "aider-notify", "--agent", "aider"),
            "--suggest-shell-commands" if shell_allowed(ctx) else "--no-suggest-shell-commands", *args]
    if unguarded_mode(ctx.lane) == "sandbox":
        argv = sandbox_argv(argv, worktree=ctx.worktree, zen_home=ctx.home, handoff=ctx.handoff,
                            git_dir=None, agent="aider", lane=ctx.lane, env=env,
                            run_dir=run_dir_for(str(ctx.job_dir)))
    return argv, {}, {}


def _flag(args: list[str], *names: str) -> str | None:
    """The first of `args` that is one of the options `names` (alone or as NAME=VALUE)."""
    return next((a for a in args if a in names or any(a.startswith(n + "=") for n in names)), None)


def _config_keys(args: list[str]) -> list[str]:
    """The keys Codex's `-c KEY=VALUE` / `--config KEY=VALUE` options set."""
    out = []
    for i, a in enumerate(args):
        value = args[i + 1] if a in ("-c", "--config") and i + 1 < len(args) else (
            a.split("=", 1)[1] if a.startswith("--config=") else None)
        if value is not None:
            out.append(value.split("=", 1)[0].strip())
    return out


def refuse_overrides(agent: str, args: list[str]) -> None:
    """Arguments that would replace zen's hooks are refused (fail closed), naming where the
    user's own settings go instead."""
    if agent == "claude" and (found := _flag(args, "--settings")) is not None:
        raise UsageError(f"zen run gives Claude Code its own --settings (the guardian's hooks), and a second "
                         f"one ({found}) would replace it: put yours in ~/.claude/settings.json or the project's "
                         f".claude/settings.json, which zen's layers above")
    if agent == "codex" and (keys := [k for k in _config_keys(args)
                                      if k.split(".")[0] in ("hooks", "features", "sandbox_mode")]):
        raise UsageError(f"zen run sets Codex's {keys[0]} itself (its guardian hook and wall): leave out -c {keys[0]}")
    if agent == "codex" and ((found := _flag(args, "--dangerously-bypass-approvals-and-sandbox", "--yolo"))
                             or "danger-full-access" in args or "--sandbox=danger-full-access" in args):
        raise UsageError(f"{found or 'danger-full-access'} would take down the wall zen run starts Codex in: "
                         "turn the wall off for the lane instead (zen lane add NAME PATH --sandbox off)")


def check(agent: str, where: Place) -> list[str]:
    """Whether the agent may start here: its wall can stand, an unguarded one is accepted. Raises
    SpawnError with the sentence; returns what to tell the user before it starts."""
    if agent not in AGENTS:
        raise UsageError(f"zen run starts {', '.join(AGENTS)}, not {agent!r}")
    notes = []
    for found, tell_pass in ((wall_check(agent, where.lane, where.spec), False),
                             (unguarded_check(agent, where.lane, where.spec), True)):
        if found is None:
            continue
        status, sentence = found
        if status == "FAIL":
            raise SpawnError(sentence)
        if status == "WARN" or tell_pass:   # an unguarded agent is told how it runs, either way
            notes.append(sentence)
    return notes


def launch(home: Home, cfg: Config, job_id: str, where: Place, agent: str, args: list[str],
           notes: list[str] | None = None) -> Launch:
    """`notes`: check()'s, when the caller asked it already (before the job was recorded)."""
    notes = check(agent, where) if notes is None else list(notes)
    refuse_overrides(agent, args)
    ctx = context(home, cfg, job_id, where, agent)
    env = base_env(cfg, agent, home, job_id, where)
    if agent == "claude":
        argv, extra, files = _claude(ctx, args)
    elif agent == "codex":
        argv, extra, files = _codex(ctx, args)
    elif agent == "gemini":
        argv, extra, files = _gemini(ctx, args)
    else:
        argv, extra, files = _aider(ctx, args, env)
    env.update(extra)
    if kill_switch_on(str(home.root)):
        notes.append("the kill switch is engaged: the guardian allows reads only")
    elif ctx.level == "observe":
        notes.append("this domain is at observe: the guardian allows reads only")
    return Launch(argv, env, files, notes)
