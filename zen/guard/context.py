"""The one path from a tool call to a decision, shared by the hook, `zen guard check` and --batch.

    Guard(home=None, env=None).check(call, cwd, worktree=None, act=False, audit=False) -> Decision

It finds the home (zen.store.readers.discover_home: --home, $ZEN_HOME, else the nearest ancestor
of the cwd holding zen.yaml), loads the
compiled policy, works out the worktree (--worktree, else $ZEN_WORKTREE, else the
`<home>/worktrees/<x>` directory holding the cwd) and the effective level (levels.py: the kill
switch, then the domain), builds the Context and calls `decide()`. A decision of "approval" goes
through approvals.py: with `act` (the hook) a granted approval is consumed and allows once, else
a pending request is written; without `act` (a check from a shell) nothing is written or used.

Fail closed: a broken policy denies before decide() is asked, a result that is not a Decision
denies, and `safe_check` turns any exception into a deny (the hook turns it into exit 2).

`writes_check` (the coordinator's lease check, zen.coord.guardcheck.check_writes, handed in by
whoever builds the Guard: the guardian sits below the coordinator) sees every call that is not
denied together with the paths it writes or deletes; it may turn it into a deny, or add a note
for the agent's context (`notes`, which the hook passes on as additionalContext).

Lean: imported by the hook (stdlib + zen.guard.* + the lean zen.store readers and layout).
"""

from __future__ import annotations

import functools
import os
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zen.errors import HomeError
from zen.guard.api import ALLOW, APPROVAL, DENY, READ_LIMIT, Context, Decision, ToolCall, subject
from zen.guard.audit import record
from zen.guard.decide import decide
from zen.guard.policy import levels
from zen.guard.policy.load import load_policy
from zen.guard.policy.tools import refusal
from zen.guard.shell.options import sq
from zen.store.layout import WORKTREES
from zen.store.readers import discover_home

VALID = (ALLOW, DENY, APPROVAL)
# (context, call, [(op, Target)], act) -> (a decision replacing an allow or approval, or None; a note or None)
WritesCheck = Callable[[Context, ToolCall, Sequence[tuple[str, Any]], bool], tuple[Decision | None, str | None]]
__all__ = ["Guard", "HomeError", "calls_for", "calls_from_record", "discover_home", "subject", "worktree_for"]


def read_head(path: str) -> bytes | None:
    """The first READ_LIMIT + 1 bytes of the regular file at `path` (more than READ_LIMIT: the file
    is longer), None when no regular file is there; other errors (permission) raise OSError."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        return os.read(fd, READ_LIMIT + 1)
    finally:
        os.close(fd)


def worktree_for(cwd: str, home: str | None, explicit: str | None = None,
                 env: Mapping[str, str] | None = None) -> str | None:
    """--worktree, else $ZEN_WORKTREE, else the <home>/worktrees/<x> directory holding `cwd`."""
    env = os.environ if env is None else env
    for candidate in (explicit, env.get("ZEN_WORKTREE")):
        if candidate:
            return os.path.abspath(os.path.expanduser(candidate))
    if not home:
        return None
    wt = os.path.join(home, WORKTREES)
    for c in (os.path.abspath(cwd), os.path.realpath(cwd)):
        for root in (wt, os.path.realpath(wt)):
            if c.startswith(root + os.sep):
                x = c[len(root) + 1:].split(os.sep, 1)[0]
                if x:
                    return os.path.join(root, x)
    return None


class Guard:
    """Decisions for one process. `cache` (batch) keeps homes and levels per cwd between calls;
    the kill switch is still checked on every call. `agent`: the calls come from an agent (the
    hook); a call with a job context ($ZEN_JOB_ID) is an agent's too. An agent is never a human."""

    def __init__(self, home: str | None = None, env: Mapping[str, str] | None = None,
                 job_id: str | None = None, cache: bool = False, agent: bool = False,
                 writes_check: WritesCheck | None = None,
                 recorder: Callable[..., bool] | None = None) -> None:
        self.explicit_home = home
        # writes the audit record (audit.record; the resident guardian commits records in groups)
        self.recorder = recorder or record
        self.writes_check = writes_check
        self.notes: list[str] = []
        self.level = ""    # the level of the last call checked
        # a plain dict: os.environ encodes and decodes on every access, and the core copies it
        self.env: Mapping[str, str] = dict(os.environ if env is None else env)
        self.job_id = job_id if job_id is not None else (self.env.get("ZEN_JOB_ID") or None)
        self.cache = cache
        self._homes: dict[str, str | None] = {}
        self._policies: dict[str | None, tuple[Any, dict[str, Any]]] = {}
        self._domains: dict[tuple[str, str], tuple[str, str | None]] = {}
        self._places: dict[tuple[str, str | None], tuple[str | None, str | None]] = {}
        self._cwds: dict[str, str] = {}
        self._contexts: dict[tuple[str, str | None, str | None, str, str | None], Context] = {}
        # a batch judges many lines against one snapshot of the filesystem: resolve each path once
        self._realpath = functools.lru_cache(maxsize=65536)(os.path.realpath) if cache else os.path.realpath
        self._read = functools.lru_cache(maxsize=1024)(read_head) if cache else read_head
        self.agent = agent or bool(self.job_id)

    # -- pieces --------------------------------------------------------------------------------

    def home_for(self, cwd: str) -> str | None:
        if self.cache and cwd in self._homes:
            return self._homes[cwd]
        home = discover_home(cwd, self.explicit_home, self.env)
        if self.cache:
            self._homes[cwd] = home
        return home

    def policy_for(self, home: str | None) -> tuple[Any, dict[str, Any]]:
        if home in self._policies:
            return self._policies[home]
        loaded = load_policy(home)
        self._policies[home] = loaded
        return loaded

    def level_for(self, home: str | None, cwd: str, autonomy: dict[str, Any]) -> tuple[str, str | None]:
        if not self.cache:
            return levels.level_for(home, self.job_id, cwd, autonomy)
        key = (home or "", cwd)
        known = self._domains.get(key)
        if known is None:
            level, domain = levels.level_for(home, self.job_id, cwd, autonomy)
            # with a home: the domain's level (the kill switch is looked at below, every time)
            known = self._domains[key] = (levels.level_of(autonomy, domain) if home else level, domain)
        if levels.kill_switch_on(home):
            return "observe", known[1]
        return known

    def place(self, cwd: str, worktree: str | None) -> tuple[str | None, str | None]:
        """(home, worktree) of a call made in `cwd`."""
        key = (cwd, worktree)
        if self.cache and key in self._places:
            return self._places[key]
        home = self.home_for(cwd)
        found = (home, worktree_for(cwd, home, worktree, self.env))
        if self.cache:
            self._places[key] = found
        return found

    def context(self, cwd: str, worktree: str | None = None) -> tuple[Context, Any]:
        given = cwd
        cwd = self._cwds.get(given) or os.path.abspath(os.path.expanduser(given))
        home, wt = self.place(cwd, worktree)
        policy, autonomy = self.policy_for(home)
        level, domain = self.level_for(home, cwd, autonomy)
        key = (cwd, wt, home, level, domain)
        ctx = self._contexts.get(key)
        if ctx is None:
            ctx = Context(cwd=cwd, worktree=wt, home=home,
                          user_home=self.env.get("HOME") or None, level=level, domain=domain,
                          job_id=self.job_id, env=self.env, realpath=self._realpath, agent=self.agent,
                          read=self._read)
            if self.cache:   # a batch: the same few places, each one Context (it is immutable)
                self._cwds[given] = cwd
                self._contexts[key] = ctx
        return ctx, policy

    # -- the decision --------------------------------------------------------------------------

    def check(self, call: ToolCall, cwd: str, worktree: str | None = None, *, act: bool = False,
              audit: bool = False) -> Decision:
        """The decision on `call`; raises on internal errors (see safe_check)."""
        ctx: Context | None = None
        core: Decision | None = None     # the policy's own decision, for the audit's replay
        try:
            ctx, policy = self.context(cwd, worktree)
            self.level = ctx.level   # the last call's level: the hook grants by it (hook.GRANT_LEVELS)
        except HomeError as exc:
            decision = Decision(DENY, "guard.home", f"{exc}; fix $ZEN_HOME (the guardian cannot find its policy)")
        else:
            writes: list[tuple[str, Any]] | None = [] if self.writes_check is not None else None
            decision = core = self.decide(call, ctx, policy, writes)
            if writes and self.writes_check is not None and decision.decision != DENY:
                override, note = self.writes_check(ctx, call, writes, act)
                if override is not None and (override.decision == DENY or decision.decision == ALLOW):
                    decision = override
                if note:
                    self.notes.append(note)
            if decision.decision == APPROVAL:
                # lean: only an approval needs this module (and its hashlib)
                from zen.guard import approvals

                decision = approvals.resolve(ctx, call, decision, act=act)
        if audit:
            if core is None or core == decision:
                self.recorder(ctx, call, decision, self.job_id)
            else:
                self.recorder(ctx, call, decision, self.job_id, core)
        return decision

    def decide(self, call: ToolCall, ctx: Context, policy: Any,
               writes: list[tuple[str, Any]] | None = None) -> Decision:
        if getattr(policy, "invalid", None):
            return Decision(DENY, "policy.invalid",
                            f"the guardian's policy is broken, so everything is denied until it is fixed: {policy.invalid}")
        if self.env.get("ZEN_GUARD_SELFTEST_CRASH") == "1":
            raise RuntimeError("self-test crash inside the decision path (ZEN_GUARD_SELFTEST_CRASH=1)")
        if self.env.get("ZEN_GUARD_SELFTEST_HANG") == "1":
            time.sleep(60)
        refused = refusal(call.tool) if self.agent else None     # tools no agent may call (tools.py)
        if refused is not None:
            return refused
        d = decide(call, ctx, policy, writes)
        if not isinstance(d, Decision) or d.decision not in VALID:
            return Decision(DENY, "guard.error", f"the decision core returned {d!r}, not a decision")
        if not d.rule or not isinstance(d.reason, str):
            return Decision(d.decision if d.decision != ALLOW else DENY, d.rule or "guard.error",
                            str(d.reason or "no reason given"))
        return d

    def check_all(self, calls: list[ToolCall], cwd: str, worktree: str | None = None, **kw: Any) -> Decision:
        """Every call must be allowed; the first that is not gives the answer."""
        decision = Decision(DENY, "tool.bad-input", "nothing to judge")
        for call in calls:
            decision = self.check(call, cwd, worktree, **kw)
            if not decision.allowed:
                return decision
        return decision

    def safe_check(self, call: ToolCall | list[ToolCall], cwd: str, worktree: str | None = None,
                   **kw: Any) -> Decision:
        """check() (check_all() for a list), with any internal error turned into a deny that names it."""
        try:
            if isinstance(call, list):
                return self.check_all(call, cwd, worktree, **kw)
            return self.check(call, cwd, worktree, **kw)
        except Exception as exc:
            return Decision(DENY, "guard.error", f"internal error, denied to be safe ({type(exc).__name__}: {exc})")


PATCH_TOOLS = frozenset({"apply_patch"})


def calls_for(tool: str, tool_input: Mapping[str, Any], cwd: str) -> list[ToolCall]:
    """The calls to judge for one tool use. Codex's apply_patch carries a whole patch in
    tool_input.command: each file it adds or updates is judged as a Write of that file (its added
    lines as the content), each file it deletes as `rm` of it, a move as both. Raises ValueError
    for a patch this cannot read (denied)."""
    if tool not in PATCH_TOOLS:
        return [ToolCall.from_hook(tool, tool_input)]
    patch = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    if isinstance(patch, list) and patch and all(isinstance(p, str) for p in patch):
        patch = patch[-1]                     # ["apply_patch", "<patch>"]
    if not isinstance(patch, str) or "*** Begin Patch" not in patch:
        raise ValueError("an apply_patch call without a patch (*** Begin Patch ...) in tool_input.command")
    calls: list[ToolCall] = []
    current: dict[str, Any] | None = None

    def path_of(rest: str) -> str:
        rest = rest.strip()
        if not rest:
            raise ValueError("an apply_patch file header names no path")
        return os.path.normpath(os.path.join(cwd, os.path.expanduser(rest)))

    def flush() -> None:
        if current is not None:
            calls.append(ToolCall.from_hook("Write", {"file_path": current["path"],
                                                      "content": "\n".join(current["added"])}))

    for line in patch.splitlines():
        header = next((h for h in ("*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:")
                       if line.startswith(h)), None)
        if header is None:
            if line.startswith("+") and current is not None:
                current["added"].append(line[1:])
            continue
        target = path_of(line[len(header):])
        if header == "*** Move to:":
            if current is None:
                raise ValueError("an apply_patch move with no file before it")
            calls.append(ToolCall(tool="Bash", command=f"rm -f -- {sq(current['path'])}"))
            current["path"] = target
            continue
        flush()
        current = None
        if header == "*** Delete File:":
            calls.append(ToolCall(tool="Bash", command=f"rm -f -- {sq(target)}"))
        else:
            current = {"path": target, "added": []}
    flush()
    if not calls:
        raise ValueError("an apply_patch call that names no file")
    return calls


def calls_from_record(rec: Any, default_cwd: str) -> tuple[list[ToolCall], str, str | None]:
    """A --batch line ({"command", "cwd"}, {"tool", "file_path", "cwd"}, or a hook payload with
    tool_name/tool_input) as (calls, cwd, worktree). Raises ValueError with a one-line reason for a
    line that is none of those."""
    if not isinstance(rec, dict):
        raise ValueError("the line is not a JSON object")
    cwd = rec.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError("cwd must be a string")
    cwd = cwd or default_cwd
    worktree = rec.get("worktree")
    if worktree is not None and not isinstance(worktree, str):
        raise ValueError("worktree must be a string")
    tool = rec.get("tool") or rec.get("tool_name")
    if "tool_input" in rec:
        if not isinstance(tool, str) or not isinstance(rec["tool_input"], dict):
            raise ValueError("tool_name must be a string and tool_input an object")
        if tool == "Bash" and not isinstance(rec["tool_input"].get("command"), str):
            raise ValueError("the Bash call has no command (a string)")
        return calls_for(tool, rec["tool_input"], cwd), cwd, worktree
    if tool is None or tool == "Bash":
        command = rec.get("command")
        if not isinstance(command, str):
            raise ValueError("the line has no command (a string) and no tool")
        return [ToolCall(tool="Bash", command=command, raw={"command": command})], cwd, worktree
    if not isinstance(tool, str):
        raise ValueError("tool must be a string")
    fields = {k: v for k, v in rec.items() if k not in ("tool", "tool_name", "cwd", "worktree")}
    return calls_for(tool, fields, cwd), cwd, worktree
