"""The guardian's one pure decision function and the data it takes and gives (DESIGN section 5).

    decide(call, ctx, policy) -> Decision

Everything the decision depends on arrives as data: the tool call, the context (cwd, worktree,
home, $HOME, effective autonomy level with the kill switch already applied, domain, job), and the
compiled policy. No I/O happens inside except through `ctx.realpath`, an injectable symlink
resolver, so the core stays testable and fast. The plumbing around it (zen/guard/hook.py, the
CLI, approvals, audit) builds the context and acts on the decision.

Lean: imported by the hook; stdlib only here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

ALLOW, DENY, APPROVAL = "allow", "deny", "approval"
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


@dataclass(frozen=True)
class ToolCall:
    tool: str                         # "Bash", a file tool, or "mcp__server__tool"
    command: str | None = None        # Bash: the command line
    file_path: str | None = None      # file tools: the target (absolute as Claude sends it)
    content: str | None = None        # text the tool writes (Write content, Edit new_string, ...)
    raw: Mapping[str, Any] = field(default_factory=dict)   # tool_input exactly as received

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


@dataclass(frozen=True)
class Context:
    cwd: str
    worktree: str | None              # the job's worktree root, if known
    home: str | None                  # the zen home, if known
    user_home: str | None             # $HOME
    level: str = "suggest"            # effective level: observe | suggest | act-and-report | autonomous
    domain: str | None = None
    job_id: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    realpath: Callable[[str], str] | None = None   # resolves symlinks that exist; None = lexical only


@dataclass(frozen=True)
class Decision:
    decision: str                     # allow | deny | approval
    rule: str                         # stable rule id, e.g. "fs.delete-outside-worktree"
    reason: str                       # one line for the agent and the timeline

    @property
    def allowed(self) -> bool:
        return self.decision == ALLOW

    def as_dict(self) -> dict[str, str]:
        return {"decision": self.decision, "rule": self.rule, "reason": self.reason}
