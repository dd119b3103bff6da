"""The home's team key (control/team-key, 0600): who may speak for a job to `zen mcp serve` from
outside that job's agent.

An agent's own server needs no key: zen.orchestration.teams.identity accepts it because it runs
under the job's agent process. The key is for a person, or a test, acting as a job over MCP: the
token for job J is HMAC-SHA256(key, "zen-mcp-job:" + J), given to the server as $ZEN_MCP_TOKEN.
The guardian lets no agent read the key (zen.guard.paths.resolve.HOME_SECRETS), and a job's own MCP
config carries no token, so an agent holds nothing that names another job.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets

from zen.store.layout import Home

_LABEL = b"zen-mcp-job:"


def _key(home: Home, create: bool) -> bytes | None:
    path = home.team_key
    if not path.exists():
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (secrets.token_hex(32) + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):   # published by link: two makers agree on one key
            os.link(tmp, path)
        tmp.unlink(missing_ok=True)
    key = path.read_bytes().strip()
    return key if len(key) >= 32 else None


def token(home: Home, job_id: str) -> str:
    """The token that lets its holder act as `job_id` to zen's MCP server (the key made once)."""
    key = _key(home, create=True)
    if key is None:
        raise ValueError(f"{home.team_key} holds no usable key (delete it: zen makes a new one)")
    return hmac.new(key, _LABEL + job_id.encode(), hashlib.sha256).hexdigest()


def valid(home: Home, job_id: str, given: str | None) -> bool:
    """`given` is `job_id`'s token (False with no key in the home, or no token given)."""
    key = _key(home, create=False)
    if not key or not given:
        return False
    want = hmac.new(key, _LABEL + job_id.encode(), hashlib.sha256).hexdigest()
    return hmac.compare_digest(want, given.strip())


__all__ = ["token", "valid"]
