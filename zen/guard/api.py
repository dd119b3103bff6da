"""The guardian's one pure decision function and the data it takes and gives (DESIGN section 5).

    decide(call, ctx, policy) -> Decision

Everything the decision depends on arrives as data: the tool call, the context (cwd, worktree,
home, $HOME, effective autonomy level with the kill switch already applied, domain, job), and the
compiled policy. No I/O happens inside except through `ctx.realpath`, an injectable symlink
resolver, so the core stays testable and fast. The plumbing around it (zen/guard/hook.py, the
CLI, approvals, audit) builds the context and acts on the decision.

Lean: imported by the hook; stdlib only here, and not even dataclasses (with inspect it costs
about as much to import as the rest of the hook's own modules): plain immutable classes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

ALLOW, DENY, APPROVAL = "allow", "deny", "approval"
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
READ_LIMIT = 65536     # bytes of a script the guardian reads to judge what running it does
_SET = object.__setattr__   # how the immutable classes below set their fields, once, in __init__


class _Frozen:
    """Immutable after __init__, compared and printed by its fields (what frozen dataclasses give)."""

    __slots__: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()  # type: ignore[attr-defined,unused-ignore]

    def __hash__(self) -> int:
        return hash((type(self).__name__, *(repr(v) for v in self._fields())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"{type(self).__name__}({args})"


class ToolCall(_Frozen):
    __slots__ = ("command", "content", "file_path", "raw", "tool")

    def __init__(self, tool: str, command: str | None = None, file_path: str | None = None,
                 content: str | None = None, raw: Mapping[str, Any] | None = None) -> None:
        # tool: "Bash", a file tool, or "mcp__server__tool"; command: Bash's command line;
        # file_path: a file tool's target (absolute, as Claude sends it); content: text the tool
        # writes (Write content, Edit new_string, ...); raw: tool_input exactly as received
        _SET(self, "tool", tool)
        _SET(self, "command", command)
        _SET(self, "file_path", file_path)
        _SET(self, "content", content)
        _SET(self, "raw", dict(raw or {}))

    tool: str
    command: str | None
    file_path: str | None
    content: str | None
    raw: Mapping[str, Any]

    @classmethod
    def from_hook(cls, tool_name: str, tool_input: Mapping[str, Any]) -> ToolCall:
        """Build from a PreToolUse payload's tool_name / tool_input (Claude Code and Codex)."""
        if not isinstance(tool_input, Mapping):
            tool_input = {}
        content = tool_input.get("content") or tool_input.get("new_string") or tool_input.get("new_source")
        if tool_name == "MultiEdit" and isinstance(tool_input.get("edits"), list):
            content = "\n".join(str(e.get("new_string", "")) for e in tool_input["edits"] if isinstance(e, Mapping))
        path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
        command = tool_input.get("command")
        return cls(tool=str(tool_name), command=str(command) if command is not None else None,
                   file_path=str(path) if path is not None else None,
                   content=str(content) if content is not None else None, raw=dict(tool_input))


def subject(call: ToolCall) -> str:
    """What the call acts on, for approvals and the audit: the command or the file path."""
    if call.command is not None:
        return call.command
    if call.file_path is not None:
        return call.file_path
    return ""


class Context(_Frozen):
    __slots__ = ("agent", "cwd", "domain", "env", "home", "job_id", "level", "read", "realpath", "user_home",
                 "worktree")

    def __init__(self, cwd: str, worktree: str | None, home: str | None, user_home: str | None,
                 level: str = "suggest", domain: str | None = None, job_id: str | None = None,
                 env: Mapping[str, str] | None = None, realpath: Callable[[str], str] | None = None,
                 agent: bool | None = None, read: Callable[[str], bytes | None] | None = None) -> None:
        # worktree: the job's worktree root if known; home: the zen home if known; user_home: $HOME;
        # level: the effective level (observe | suggest | act-and-report | autonomous), kill switch
        # already applied; realpath: resolves symlinks that exist (None = lexical only);
        # agent: the call comes from an agent, never a human (a hook call, or any check with a
        # job context: the default when job_id is set); read: the first bytes of an existing
        # regular file (None when there is none), READ_LIMIT of them at most (None = unknown)
        _SET(self, "cwd", cwd)
        _SET(self, "worktree", worktree)
        _SET(self, "home", home)
        _SET(self, "user_home", user_home)
        _SET(self, "level", level)
        _SET(self, "domain", domain)
        _SET(self, "job_id", job_id)
        _SET(self, "env", env if env is not None else {})
        _SET(self, "realpath", realpath)
        _SET(self, "agent", bool(job_id) if agent is None else agent)
        _SET(self, "read", read)

    cwd: str
    worktree: str | None
    home: str | None
    user_home: str | None
    level: str
    domain: str | None
    job_id: str | None
    env: Mapping[str, str]
    realpath: Callable[[str], str] | None
    agent: bool
    read: Callable[[str], bytes | None] | None


class Decision(_Frozen):
    __slots__ = ("decision", "reason", "rule")

    def __init__(self, decision: str, rule: str, reason: str) -> None:
        # decision: allow | deny | approval; rule: a stable id, e.g. "fs.outside-worktree";
        # reason: one line for the agent and the timeline
        _SET(self, "decision", decision)
        _SET(self, "rule", rule)
        _SET(self, "reason", reason)

    decision: str
    rule: str
    reason: str

    @property
    def allowed(self) -> bool:
        return self.decision == ALLOW

    def as_dict(self) -> dict[str, str]:
        return {"decision": self.decision, "rule": self.rule, "reason": self.reason}
