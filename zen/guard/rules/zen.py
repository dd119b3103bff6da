"""zen itself, run by an agent: an agent is never a human (DESIGN section 5).

Every zen command that changes state is denied to an agent (a hook call, or any check with a job
context): dispatch (an agent gets workers only through the team tools, which are guarded and
capped), approve / deny, kill-switch --release and --stop-agents (engaging it stays allowed),
autonomy promote / demote, accept / reject, lane add / remove / trust, harvest, land, gc, clean,
supervise, serve, init, incident new, doctor --rebuild, attach, hook, guard hook, lock / unlock
(an agent's leases are taken by the guardian as it writes; the team tools ask for more), and cancel /
finish / send of any job but the agent's own. Whatever zen is run as reaches this handler:
`zen`, any path to it, `python -m zen`, a link to it (the analyser resolves the program word),
a copy of its console script (read from disk), `uv run zen`, `bash -c 'zen ...'`, ...

Read-only commands stay allowed (status, show, log, output, queue, approvals, preflight, doctor,
locks, changes, guard check / settings, lane list, autonomy show, incident list / show / check, --help,
--version), and so does `zen gate`, the one sanctioned door to a listed API (it applies its own
policy and the autonomy level). Anything this table does not know is denied to an agent.

A human (a check with no job context) may run every zen command; at observe they count as not
read-only, like any other program.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zen.guard.paths.records import is_own_or_worker
from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

READ_ONLY = frozenset({"status", "show", "log", "output", "queue", "approvals", "preflight", "doctor",
                       "locks", "changes"})
READ_ONLY_NESTED: dict[str, frozenset[str | None]] = {
    "lane": frozenset({"list"}),
    "guard": frozenset({"check", "settings"}),
    "autonomy": frozenset({"show", None}),      # `zen autonomy` alone shows
    "incident": frozenset({"list", "show", "check"}),
    # the team tools' reads; spawn, report, control and message act as a job, and from a shell an
    # agent could name any job: agents use their MCP tools (zen mcp serve) for those
    "team": frozenset({"status", "tree", "wait"}),
}
OWN_JOB_ONLY = frozenset({"cancel", "finish", "send"})
# read-only, but of one job: an agent's own (or its workers') only
OWN_RECORDS = frozenset({"output", "show", "log"})
GATE = "gate"
# options of the zen group (before the subcommand) that take a value
_GROUP_VALUE = frozenset({"--home"})
# options of subcommands that take a value (so their value is not read as the job)
_VALUE_OPTS = frozenset({"--reason", "--events", "-n", "--lines", "--lane", "--older-than", "--cwd",
                         "--worktree", "--tool", "--file", "--content", "--batch", "-m", "--timeout",
                         "-d", "--data", "--since", "--job"})



def zen(an: Analyser, name: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    what = changes_state(args, an.ctx.job_id)
    if what is None:
        if an.ctx.agent:
            _other_records(an, [a.text for a in args])
        return
    if an.ctx.agent:
        an.deny("self.zen-command", f"`zen {what}` changes zen's own state, and an agent is never a "
                "human: a person runs it (read-only zen commands and `zen gate` stay open)")
    an.ro(f"`zen {what}`")


def _other_records(an: Analyser, texts: list[str]) -> None:
    """`zen output/show/log JOB`: an agent reads only its own job's records and its workers'
    (security-findings L17): another job's output, prompt and timeline are that job's."""
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        i += 2 if texts[i] in _GROUP_VALUE else 1
    if i >= len(texts) or texts[i] not in OWN_RECORDS:
        return
    rest = texts[i + 1:]
    if "-h" in rest or "--help" in rest:
        return
    pos = _positional(rest)
    job = pos[0] if pos else ""
    if not is_own_or_worker(an.ctx.home, job, an.ctx.job_id, an.ctx.read):
        an.deny("self.records", f"`zen {texts[i]} {job or '(no job)'}`: another job's records (its output, prompt and "
                "timeline); an agent reads its own job's and its workers' (name a worker by its full id)")


def module(an: Analyser, mod: str, args: list[Word], st: State, cmd: Cmd | None, depth: int) -> None:
    """`python -m zen...`: the CLI is judged as `zen`; any other module of zen's own code is
    denied to an agent (it acts on zen's state with nothing to judge it by)."""
    if mod in ("zen", "zen.__main__", "zen.cli", "zen.cli.main"):
        zen(an, "zen", args, st, cmd, depth)
        return
    code(an, f"python -m {mod}")


def code(an: Analyser, where: str) -> None:
    """zen's own code run some other way than its CLI (python -m zen.x, a script of the package,
    `import zen` in inline Python)."""
    if an.ctx.agent:
        an.deny("self.zen-command", f"{where} runs zen's own code, and an agent is never a human: "
                "use the zen CLI's read-only commands")
    an.ro(where)


def is_zen_module(mod: str) -> bool:
    return mod == "zen" or mod.startswith("zen.")


def is_zen_script(path: str) -> bool:
    """A Python file of zen's package (.../zen/__main__.py, .../zen/cli/main.py, ...)."""
    parts = path.split("/")
    return path.endswith(".py") and "zen" in parts[:-1]


def changes_state(args: list[Word], own_job: str | None) -> str | None:
    """What `zen ARGS` does when it changes zen's state (for the reason), None when it only reads."""
    texts = [a.text for a in args]
    if any(not a.known for a in args):
        return " ".join(a.raw for a in args) or "(a command only known at run time)"
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        opt = texts[i]
        if opt in ("-h", "--help", "--version"):
            return None
        if opt in _GROUP_VALUE:
            i += 2
        elif opt.split("=", 1)[0] in _GROUP_VALUE:
            i += 1
        else:
            return " ".join(texts)           # an option zen's group does not take: unsure, so no
    if i >= len(texts):
        return None                          # `zen` alone prints its help
    sub, rest = texts[i], texts[i + 1:]
    if "-h" in rest or "--help" in rest:
        return None
    shown = " ".join([sub, *rest][:3])
    if sub == GATE or sub in READ_ONLY:
        return "doctor --rebuild" if sub == "doctor" and "--rebuild" in rest else None
    if sub in READ_ONLY_NESTED:
        pos = _positional(rest)
        return None if (pos[0] if pos else None) in READ_ONLY_NESTED[sub] else shown
    if sub == "kill-switch":
        return shown if any(r in ("--release", "--stop-agents") for r in rest) else None
    if sub in OWN_JOB_ONLY:
        pos = _positional(rest)
        if own_job and pos and pos[0] and own_job.startswith(pos[0]):
            return None
        return f"{sub} {pos[0] if pos else ''}".rstrip() + " (another job, or none named)"
    return shown


def _positional(rest: list[str]) -> list[str]:
    out = []
    skip = False
    for i, t in enumerate(rest):
        if skip:
            skip = False
            continue
        if t == "--":
            out.extend(rest[i + 1:])
            break
        if t.startswith("-"):
            skip = t in _VALUE_OPTS
            continue
        out.append(t)
    return out
