"""decide(call, ctx, policy) -> Decision: the guardian's one pure decision function.

Placeholder while the analyser lands: it denies everything (fail closed) so the plumbing can
be built against the real signature.
"""

from __future__ import annotations

from zen.guard.api import DENY, Context, Decision, ToolCall
from zen.guard.policy import Policy


def decide(call: ToolCall, ctx: Context, policy: Policy) -> Decision:
    if policy.invalid:
        return Decision(DENY, "policy.invalid", f"the guardian policy is broken: {policy.invalid}")
    return Decision(DENY, "guard.not-ready", "the guardian's analyser is not installed yet (fail closed)")
