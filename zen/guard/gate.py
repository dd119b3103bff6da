"""Integration gates: `zen gate NAME METHOD PATH` is the sanctioned way to call a listed API.

The policy (policy/guardian.yaml `integrations:`) names each integration with its base URL, the
methods it allows, where its credential comes from (`{env: VAR}` or `{file: PATH}`) and how it is
sent (bearer, basic, none, header:NAME, query:NAME). Raw curl/wget/requests to those hosts are
denied by the guardian; the gate is the one door, and every call through it is recorded
(`gate.called` in the job's timeline when $ZEN_JOB_ID is set, else the home's audit log).

The gate refuses: an unknown integration, a method the integration does not allow, a path that
is not a plain absolute path under the base URL, a broken policy, and (at `observe`, which the
kill switch forces) any method that is not GET/HEAD/OPTIONS. Redirects are not followed, so the
credential never travels to another host.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zen.core.events import Actor, EventType
from zen.errors import GateError
from zen.guard.audit import write_home_log
from zen.guard.policy.levels import level_for
from zen.guard.policy.load import load_policy, split_url
from zen.store.events import append
from zen.store.readers import job_dir as job_dir_of

READ_METHODS = ("GET", "HEAD", "OPTIONS")
DEFAULT_TIMEOUT_S = 30.0


@dataclass
class Response:
    integration: str
    method: str
    path: str
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        return None                       # the 3xx comes back as the response


def _check_path(path: str) -> str:
    if not path.startswith("/"):
        raise GateError(f"the path must start with / (got {path!r})")
    if "://" in path or "\\" in path or any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise GateError("the path must be a plain path under the integration's base URL")
    segments = urllib.parse.unquote(path.split("?", 1)[0].split("#", 1)[0]).split("/")
    if any(s in ("..", ".") for s in segments):
        raise GateError("the path must not contain . or .. segments")
    return path


def credential(name: str, integ: Mapping[str, Any], env: Mapping[str, str]) -> str:
    cred = integ.get("credential") or {}
    if "env" in cred:
        value = env.get(cred["env"])
        if not value:
            raise GateError(f"the credential for {name} is not set: export {cred['env']}")
        return value
    if "file" in cred:
        path = os.path.expanduser(cred["file"])
        try:
            with open(path, encoding="utf-8") as f:
                value = f.read().strip()
        except OSError as exc:
            raise GateError(f"the credential file for {name} cannot be read ({path}: {exc.strerror})") from None
        if not value:
            raise GateError(f"the credential file for {name} is empty ({path})")
        return value
    raise GateError(f"integration {name} names no credential source")


def call(home: str | None, name: str, method: str, path: str, data: bytes | None = None, *,
         env: Mapping[str, str] | None = None, cwd: str | None = None,
         timeout: float = DEFAULT_TIMEOUT_S) -> Response:
    """Make the call, record it, return the response (any status). Raises GateError on refusal."""
    env = os.environ if env is None else env
    method = method.upper()
    policy, autonomy = load_policy(home)
    if policy.invalid:
        raise GateError(f"the guardian's policy is broken, so no gate opens until it is fixed: {policy.invalid}")
    integrations = policy.integrations
    integ = integrations.get(name)
    if integ is None:
        known = ", ".join(sorted(integrations)) or "none are configured"
        raise GateError(f"no integration named {name!r} in policy/guardian.yaml (known: {known})")
    if method not in integ["methods"]:
        raise GateError(f"{name} does not allow {method} (allowed: {', '.join(integ['methods'])})")
    _check_path(path)
    job_id = env.get("ZEN_JOB_ID") or None
    if home and method not in READ_METHODS:
        level, _ = level_for(home, job_id, cwd or os.getcwd(), autonomy)
        if level == "observe":
            raise GateError(f"{method} through a gate changes things, and this domain is at observe "
                            "(or the kill switch is on): only GET, HEAD and OPTIONS pass")
    url = integ["base_url"] + path
    parts = split_url(url)
    if parts is None or parts[1] != integ["host"] or parts[2] != integ.get("port"):
        raise GateError(f"the path would leave {integ['base_url']}")
    headers = {"User-Agent": "zen-gate/1", "Accept": "application/json, */*"}
    auth = integ.get("auth", "bearer")
    if auth != "none":
        secret = credential(name, integ, env)
        if auth == "bearer":
            headers["Authorization"] = f"Bearer {secret}"
        elif auth == "basic":
            headers["Authorization"] = "Basic " + base64.b64encode(secret.encode()).decode()
        elif auth.startswith("header:"):
            headers[auth.split(":", 1)[1]] = secret
        elif auth.startswith("query:"):
            sep = "&" if "?" in url else "?"
            url += sep + urllib.parse.urlencode({auth.split(":", 1)[1]: secret})
    if data is not None:
        headers["Content-Type"] = "application/json" if _is_json(data) else "application/octet-stream"
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    opener = urllib.request.build_opener(_NoRedirect)
    status: int | None = None
    try:
        try:
            with opener.open(req, timeout=timeout) as resp:
                status = resp.status
                body = resp.read()
                rheaders = dict(resp.headers.items())
        except urllib.error.HTTPError as exc:
            status = exc.code
            body = exc.read() if exc.fp is not None else b""
            rheaders = dict(exc.headers.items()) if exc.headers else {}
        except urllib.error.URLError as exc:
            raise GateError(f"could not reach {name} at {integ['base_url']} ({exc.reason})") from None
        except TimeoutError:
            raise GateError(f"{name} did not answer within {timeout:g} s") from None
        except OSError as exc:
            raise GateError(f"could not reach {name} at {integ['base_url']} ({exc})") from None
    except GateError as exc:
        record(home, job_id, name, method, path, None, error=str(exc))
        raise
    record(home, job_id, name, method, path, status)
    return Response(name, method, path, status, body, rheaders)


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def record(home: str | None, job_id: str | None, name: str, method: str, path: str,
           status: int | None, error: str | None = None) -> None:
    """gate.called in the job's timeline, else the home's audit log (never raises)."""
    fields: dict[str, Any] = {"integration": name, "method": method, "path": path.split("?", 1)[0],
                              "status": status}
    if error:
        fields["error"] = error
    try:
        job_dir = job_dir_of(home, job_id) if job_id and home else None
        if job_id and job_dir is not None and os.path.isdir(job_dir):
            append(Path(job_dir), job_id, EventType.GATE_CALLED, actor=Actor.GATE, **fields)
            return
        if home:
            if job_id:
                fields["job"] = job_id
            write_home_log(home, EventType.GATE_CALLED, actor=Actor.GATE, **fields)
    except Exception as exc:
        sys.stderr.write(f"zen gate: could not record the call ({type(exc).__name__}: {exc})\n")
