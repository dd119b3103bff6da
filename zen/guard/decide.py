"""decide(call, ctx, policy) -> Decision: the guardian's one pure decision function.

Fail closed: a broken policy, a command that does not parse or cannot be followed, a tool it
does not know, and any internal error all deny. The result of a call that is otherwise allowed
becomes `approval` when a policy rule (or a `require_approval` switch) asks for a human.

Tools:
  Bash                      parsed and walked (analyse.py); every simple command judged
  Write/Edit/MultiEdit/NotebookEdit   the target path gets the delete/overwrite path rules,
                            the guardian's own files are protected, policy rules apply
  Read/Glob/Grep/LS/NotebookRead      allowed unless they read a credential store
  WebFetch                  denied for the high-consequence hosts (raw calls)
  mcp__*                    when the input names a path and the tool's name says it writes,
                            the path rules apply; an MCP tool with no write target is allowed
                            (MCP servers are configured by the human, not the agent)
  anything else             denied (unknown tool)
"""

from __future__ import annotations

import re
from typing import Any

from zen.guard.analyse import Analyser, Denied
from zen.guard.api import ALLOW, DENY, FILE_TOOLS, Context, Decision, ToolCall
from zen.guard.paths.resolve import credential_hit
from zen.guard.policy.load import Policy
from zen.guard.rules import handler
from zen.guard.shell.words import ShellError, Word, lit

READ_TOOLS = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
INERT_TOOLS = frozenset({"TodoWrite", "TodoRead", "Task", "Agent", "ExitPlanMode", "EnterPlanMode",
                         "WebSearch", "BashOutput", "KillShell", "KillBash", "SlashCommand", "Skill",
                         "AskUserQuestion", "ListMcpResourcesTool", "ReadMcpResourceTool"})
# compiled on first use (by re's cache): only MCP tools need it
_MCP_WRITE_WORDS = (r"(?i)(write|edit|create|delete|remove|move|rename|mkdir|put|upload|"
                              r"patch|apply|replace|insert|append|save|copy|update|set|rm|unlink|"
                              r"chmod|truncate|overwrite)")
_PATH_KEYS = ("file_path", "path", "filePath", "notebook_path", "target", "destination", "dest",
              "filename", "file", "directory", "dir", "source", "src", "to", "from", "new_path",
              "old_path", "paths", "files")


def decide(call: ToolCall, ctx: Context, policy: Policy, writes: list[tuple[str, Any]] | None = None) -> Decision:
    """`writes`, when given, receives (op, Target) for every path the call writes or deletes."""
    if policy.invalid:
        return Decision(DENY, "policy.invalid", f"the guardian policy is broken, so everything is "
                        f"denied until it is fixed: {policy.invalid}")
    try:
        an = Analyser(ctx, policy, handler)
        an.writes = writes
        _dispatch(an, call)
        if an.pending is not None:
            return an.pending
        if an.report is not None:
            return an.report
        return Decision(ALLOW, "allow", "no rule objects")
    except Denied as d:
        return d.decision
    except ShellError as exc:
        return Decision(DENY, exc.rule, exc.reason)
    except RecursionError:
        return Decision(DENY, "guard.internal", "the command is nested too deeply to analyse")
    except Exception as exc:  # fail closed: a bug in the analyser must deny, never allow
        return Decision(DENY, "guard.internal", f"the guardian failed to analyse this call "
                        f"({type(exc).__name__}: {exc}); denied to be safe")


def _dispatch(an: Analyser, call: ToolCall) -> None:
    tool = call.tool
    if tool == "Bash":
        if call.command is None or not isinstance(call.command, str):
            an.deny("tool.bad-input", "a Bash call without a command")
        if "\x00" in call.command or "\x01" in call.command:
            an.deny("shell.parse", "the command contains NUL/control bytes")
        an.bash(call.command)
        return
    if tool in FILE_TOOLS:
        _file_tool(an, call)
        return
    if tool in READ_TOOLS:
        path = call.file_path or _first_path(call.raw)
        if path:
            an.read_word(lit(path), an.st, recursive=tool in ("Glob", "Grep", "LS"))
        pattern = call.raw.get("pattern") if isinstance(call.raw, dict) else None
        if tool == "Glob" and isinstance(pattern, str):
            hit = credential_hit(None, pattern, an.user_home)
            if hit:
                an.deny("creds.read", f"globs a credential store ({hit})")
        return
    if tool == "WebFetch":
        url = call.raw.get("url") if call.raw else None
        if not isinstance(url, str):
            an.deny("tool.bad-input", "WebFetch without a url")
        an.host_check(url)
        return
    if tool in INERT_TOOLS:
        return
    if tool.startswith("mcp__"):
        _mcp(an, call)
        return
    an.deny("tool.unknown", f"the guardian does not know the tool {tool!r}, so it cannot judge it")


def _file_tool(an: Analyser, call: ToolCall) -> None:
    path = call.file_path
    if not path:
        an.deny("tool.bad-input", f"{call.tool} without a file path")
    an.ro(f"{call.tool} (a file edit)")
    w = Word(path, path) if "\x00" not in path else Word(path)
    # the text it writes (all of it for Write, the new part for an edit): what a package
    # manager's configuration file names is judged on it
    an.write_word(w, an.st, f"{call.tool} writes", call.content if call.content is not None else "")
    _tool_rules(an, call, path)


def _tool_rules(an: Analyser, call: ToolCall, path: str) -> None:
    t = an.resolver.target(path, an.cwd, {}, True)
    abspath = t.path if t is not None else path
    text = call.content or ""
    for rule in an.rules:
        m = rule.match
        if any(k in m for k in ("command", "subcommand", "args", "flags", "host")):
            continue
        if "tool" in m and call.tool not in m["tool"]:
            continue
        if "path" in m and not rule.path_matches(abspath, an.worktree or an.cwd, an.user_home):
            continue
        if rule.text_res and not any(rx.search(text) for rx in rule.text_res):
            continue
        an.rule_hit(rule)


def _first_path(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return None
    for k in _PATH_KEYS:
        v = raw.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def _mcp(an: Analyser, call: ToolCall) -> None:
    raw = call.raw if isinstance(call.raw, dict) else {}
    paths: list[str] = []
    for k in _PATH_KEYS:
        v = raw.get(k)
        if isinstance(v, str) and v:
            paths.append(v)
        elif isinstance(v, list):
            paths.extend(x for x in v if isinstance(x, str) and x)
    if not paths:
        return
    writes = bool(re.search(_MCP_WRITE_WORDS, call.tool.split("__")[-1])) or any(
        k in raw for k in ("content", "new_string", "edits", "data"))
    for p in paths:
        if writes:
            an.ro(f"{call.tool} (writes)")
            an.write_word(lit(p), an.st, f"{call.tool} writes")
            if re.search(r"(?i)(delete|remove|rm|unlink|move|rename)", call.tool.split("__")[-1]):
                an.delete_word(lit(p), an.st, f"{call.tool} deletes")
        else:
            an.read_word(lit(p), an.st)
    if writes:
        _tool_rules(an, call, paths[0])
