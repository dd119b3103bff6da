"""Any program the table does not name: it runs, within the same rules.

Vendor CLIs of high-consequence services are denied, credential-printing and database-wiping
commands are checked, destructive cloud subcommands denied, every argument that names a
credential store denied, and at observe only read-only programs run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.policy import defaults
from zen.guard.rules import db, env, net, pkg, secrets
from zen.guard.rules.table import SHELLS
from zen.guard.shell.words import Cmd, State, Word, lit

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

READ_ONLY = frozenset(defaults.READ_ONLY_COMMANDS) - {"ip", "ifconfig", "reset", "top", "htop",
                                                      "history", "printenv"}


def generic(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    if name in an.policy.vendor_clis:
        an.deny("net.vendor-cli", f"`{name}` talks to a high-consequence service: declare an "
                  "integration and use `zen gate NAME`")
    if name in defaults.VENDOR_CLIS:
        an.deny("net.vendor-cli", f"`{name}` talks to a high-consequence service")
    env.cred_command(an, name, args)
    secrets.check(an, name, args)
    db.db_command(an, name, args)
    net.remote_destructive(an, name, args)
    pkg.publish_check(an, name, args)       # twine upload, flit/hatch publish, gem push, ...
    if name not in READ_ONLY:
        an.ro(f"`{name}`")
    for a in args:
        t = a.text
        if t.startswith("-") and "=" in t:
            an.read_word(lit(t.split("=", 1)[1]), st)
        else:
            if a.procsub and name in SHELLS:
                an.deny("opaque.exec", "runs a script from a process substitution")
            an.read_word(a, st)
        if "://" in t:
            an.host_check(t)
    if name in an.policy.system_commands:
        an.need("system_commands", "approval.system-command", f"`{name}` changes the system")
    if name in an.policy.network_commands or (name in defaults.NETWORK_SUBCOMMANDS and (
            not defaults.NETWORK_SUBCOMMANDS[name] or
            any(a.text in defaults.NETWORK_SUBCOMMANDS[name] for a in args[:2]))):
        an.need("network_requests", "approval.network", f"`{name}` reaches the network")


def forge(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """glab and hub: as any program, and their `api` calls as gh's (a change needs the job's level)."""
    generic(an, name, args, st, cmd, depth)
    words = [a.text for a in args if not a.text.startswith("-")]
    if words[:1] == ["api"]:
        net.forge_call(an, name, args[1:])
    elif name == "glab" and words[:2] in (["mr", "merge"], ["mr", "approve"]) and an.ctx.agent:
        an.deny("remote.human-only", f"`glab {' '.join(words[:2])}` merges or approves a merge request, and an "
                "agent is never a human: zen harvests the work for a person to review")
    elif len(words) >= 2 and words[1] in _FORGE_CHANGES and words[0] not in ("config", "auth", "alias", "help"):
        an.beyond("report.hosted-api", f"`{name} {' '.join(words[:2])}` changes something on the forge, "
                  "outside the worktree")


# glab / hub verbs that change the forge (glab mr create, hub release create, glab ci run, ...)
_FORGE_CHANGES = frozenset({"create", "update", "edit", "close", "reopen", "delete", "merge", "approve",
                            "revoke", "note", "comment", "run", "retry", "cancel", "trigger", "set", "fork",
                            "archive", "unarchive", "transfer", "upload", "rebase", "subscribe", "unsubscribe",
                            "publish", "play", "label"})


def package_tool(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """pip, pipx, gem, cargo, go, composer: as any program, and the package sources they name."""
    generic(an, name, args, st, cmd, depth)
    pkg.sources(an, name, args)
