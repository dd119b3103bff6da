"""Mutating calls to hosted APIs (GitHub, GitLab, Vercel, Slack, ...): an action beyond the worktree.

    mutating_call(an, url, method, where, body)   the policy's hosted API hosts, by method

Reading a hosted API (GET, HEAD, OPTIONS, a GraphQL query) is fine. A POST, PUT, PATCH or DELETE
(or a method only known at run time, or a GraphQL body that is a mutation or cannot be seen)
changes something outside the worktree, so it needs the job's autonomy level to allow that, as a
push does (`an.beyond`: denied at observe and suggest, reported at act-and-report).

Lean on purpose: imported by the hook (stdlib + zen.guard.shell.urls).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from zen.guard.shell.urls import url_host
from zen.guard.shell.words import UNK

if TYPE_CHECKING:
    from zen.guard.analyse import Analyser

READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
UNKNOWN = "a request that is not a plain read"
_MUTATION = re.compile(r"(?i)\bmutation\b")
# merging or approving a pull/merge request lands or approves work: never an agent's call
_HUMAN_ONLY_PATH = re.compile(r"/(?:pulls|merge_requests|pullrequests)/[^/]+/(?:merge|approve)/?$")


def graphql_read(path: str, bodies: list[str] | None) -> bool:
    """A POST to a GraphQL endpoint that only reads: every body is known and none is a mutation."""
    if not path.rstrip("/").endswith("graphql") or bodies is None:
        return False
    return bool(bodies) and all(UNK not in b and not _MUTATION.search(b) for b in bodies)


def url_path(url: str) -> str:
    rest = url.split("://", 1)[-1]
    path = rest[len(re.split(r"[/?#]", rest, maxsplit=1)[0]):]
    return path.split("?", 1)[0].split("#", 1)[0]


def mutating_call(an: Analyser, url: str, method: str | None, where: str,
                  bodies: list[str] | None = None, forge: bool = False) -> None:
    """`method` (None: only known at run time) sent to `url`; `bodies`: the request bodies the
    command gives (None when one cannot be seen), for telling a GraphQL query from a mutation;
    `forge`: a forge CLI's api command (gh api), a hosted API whatever its host."""
    m = (method or "").upper()
    if m in READ_METHODS:
        return
    host, port, scheme = url_host(url)
    if host is None or UNK in host:
        return
    hit = an.policy.match_hosted(host, port, scheme) or ((host, "code hosting", None) if forge else None)
    if hit is None:
        return
    path = url_path(url)
    if m == "POST" and graphql_read(path, bodies):
        return
    if an.ctx.agent and m in ("PUT", "POST") and _HUMAN_ONLY_PATH.search(path):
        an.deny("remote.human-only", f"{where}: {m} {host}{path} merges or approves a pull request, and an "
                "agent is never a human: zen harvests the work for a person to review")
    what = m or UNKNOWN
    an.beyond("report.hosted-api", f"{where}: {what} to {host} ({hit[1].replace('_', ' ')}) changes something outside the "
              "worktree")


def hosted_host(an: Analyser, url: str) -> bool:
    host, port, scheme = url_host(url)
    return host is not None and UNK not in host and an.policy.match_hosted(host, port, scheme) is not None
