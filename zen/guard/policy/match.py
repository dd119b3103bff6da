"""The policy's own rules (policy/guardian.yaml, the built-in table) matched against one command.

    policy_rules(name, args, st, cmd)   every rule of the decision's domain and level whose
                                        command, subcommand, args, flags, host, text and path
                                        patterns all hold: its decision (deny, or an approval)
    rule_hit(rule)                      a rule that matched: deny, or the first approval pending

A mixin of Analyser (guard/analyse.py), which supplies the verbs, the resolver and the rules of
the decision.

Lean on purpose: imported by the hook (stdlib + zen.guard only).
"""

from __future__ import annotations

from collections.abc import Callable
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, NoReturn

from zen.guard.api import APPROVAL, Decision
from zen.guard.policy.rule import Rule
from zen.guard.shell.options import flag_present
from zen.guard.shell.urls import host_of
from zen.guard.shell.words import Cmd, State, Word

if TYPE_CHECKING:
    from zen.guard.paths.resolve import Resolver


class PolicyRules:
    """The policy's rules of one decision (Analyser supplies the attributes and the verbs)."""

    rules: list[Rule]
    text: str
    pending: Decision | None
    resolver: Resolver
    worktree: str | None
    cwd: str
    user_home: str | None
    _text_hits: dict[str, bool]
    # supplied by Analyser (annotations only: a stub here would win the MRO)
    deny: Callable[[str, str], NoReturn]

    # -- policy rules -------------------------------------------------------------------------------
    def policy_rules(self, name: str, args: list[Word], st: State, cmd: Cmd | None) -> None:
        if not self.rules:
            return
        texts = [a.text for a in args]
        posw: list[str] | None = None    # the positional words, when the first subcommand rule asks
        paths: list[str] | None = None   # resolved once, when the first rule with a path asks
        for rule in self.rules:
            m = rule.match
            if "tool" in m:
                continue
            if rule.names is not None:
                if name not in rule.names:
                    continue
            elif "command" in m and not any(fnmatchcase(name, g) for g in m["command"]):
                continue
            if rule.subcommands is not None:
                if posw is None:
                    posw = [t for t in texts if not t.startswith("-")]
                if not any(posw[:len(s)] == s for s in rule.subcommands):
                    continue
            if "args" in m and not any(fnmatchcase(t, g) for t in texts for g in m["args"]):
                continue
            if "flags" in m and not any(flag_present(texts, f) for f in m["flags"]):
                continue
            if "host" in m:
                hosts = [h for t in texts for h in [host_of(t)] if h]
                if not any(fnmatchcase(h, g) for h in hosts for g in m["host"]):
                    continue
            if rule.text_res and not self._text_hit(rule):
                continue
            if "path" in m:
                if paths is None:
                    paths = []
                    for t in texts:
                        tg = self.resolver.target(t, st.cwd, st.links)
                        if tg is not None:
                            paths.append(tg.path)
                    if cmd is not None:
                        for w, _ in cmd.writes:
                            tg = self.resolver.target(w.text, st.cwd, st.links)
                            if tg is not None:
                                paths.append(tg.path)
                if not any(rule.path_matches(p, self.worktree or self.cwd, self.user_home) for p in paths):
                    continue
            self.rule_hit(rule)

    def _text_hit(self, rule: Rule) -> bool:
        """A rule's text patterns against the whole command (the same for every command in it)."""
        hit = self._text_hits.get(rule.id)
        if hit is None:
            hit = self._text_hits[rule.id] = any(rx.search(self.text) for rx in rule.text_res)
        return hit

    def rule_hit(self, rule: Rule) -> None:
        if rule.decision == "approval":
            if self.pending is None:
                self.pending = Decision(APPROVAL, rule.id, rule.label)
        else:
            self.deny(rule.id, rule.label)
