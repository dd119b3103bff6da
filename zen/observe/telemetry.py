"""Which OpenTelemetry settings a job's agent starts with, and who may send zen telemetry.

The supervisor runs one OTLP/HTTP receiver per home (zen/observe/receiver.py) and publishes it in
`control/otlp.json` ({"v": 1, "port", "pid"}). An agent it starts gets, on top of the environment
it inherits:

    CLAUDE_CODE_ENABLE_TELEMETRY=1
    OTEL_LOGS_EXPORTER=otlp
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=http/json
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://127.0.0.1:<port>/v1/logs
    OTEL_EXPORTER_OTLP_LOGS_HEADERS=Authorization=Bearer zen1.<job>.<mac>
    OTEL_LOGS_EXPORT_INTERVAL=<observatory.export_interval in ms>
    OTEL_RESOURCE_ATTRIBUTES=<the user's>,zen.job=<job>,zen.lane=<lane>

Only the logs signal is zen's (its events carry every API call, error and tool result): the
per-signal variables leave a user's own metrics exporter and its endpoint as they were. A user
who exported logs over OTLP http/json keeps getting them: the job's `otel-relay.json` remembers
their endpoint and headers, and the receiver forwards each batch there.

The bearer token names the job and is signed with the home's `control/otlp-secret` (0600, which
the guardian lets no agent read): an agent can report only its own job's telemetry.

Stdlib only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import tomllib
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zen.core.durations import parse_duration
from zen.store.atomic import atomic_write, create_exclusive
from zen.store.layout import OTEL_RELAY as RELAY_FILE
from zen.store.layout import OTLP_RECEIVER, OTLP_SECRET, valid_job_id

TOKEN_PREFIX = "zen1"
LOGS_PATH = "/v1/logs"
# the variables zen sets; a user's own values of these are replaced for the job
SET_BY_ZEN = ("CLAUDE_CODE_ENABLE_TELEMETRY", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL",
              "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
              "OTEL_LOGS_EXPORT_INTERVAL", "OTEL_RESOURCE_ATTRIBUTES")


def receiver_file(control: Path) -> Path:
    return control / OTLP_RECEIVER


def secret_file(control: Path) -> Path:
    return control / OTLP_SECRET


def ensure_secret(control: Path) -> bytes:
    """The home's telemetry secret, created once (0600, published by link so two processes
    agree on it)."""
    path = secret_file(control)
    if not path.exists():
        control.mkdir(parents=True, exist_ok=True)
        create_exclusive(path, secrets.token_hex(32) + "\n", mode=0o600)
    secret = path.read_bytes().strip()
    if len(secret) < 32:
        raise ValueError(f"{path} holds no usable secret (delete it: the supervisor makes a new one)")
    return secret


def _mac(secret: bytes, job_id: str) -> str:
    return hmac.new(secret, f"otlp:{job_id}".encode(), hashlib.sha256).hexdigest()[:40]


def job_token(secret: bytes, job_id: str) -> str:
    return f"{TOKEN_PREFIX}.{job_id}.{_mac(secret, job_id)}"


def token_job(secret: bytes, header: str | None) -> str | None:
    """The job an `Authorization` header's token was made for, None when it is not a valid one."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    prefix, _, rest = token.strip().partition(".")
    job, _, mac = rest.rpartition(".")
    if prefix != TOKEN_PREFIX or not valid_job_id(job):
        return None
    return job if hmac.compare_digest(mac, _mac(secret, job)) else None


def publish(control: Path, port: int) -> None:
    """Say where this process's receiver listens (control/otlp.json)."""
    data = {"v": 1, "port": port, "pid": os.getpid()}
    atomic_write(receiver_file(control), json.dumps(data) + "\n", durable=False)


def published(control: Path) -> dict[str, Any]:
    try:
        data = json.loads(receiver_file(control).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("v") == 1 else {}


def live_port(control: Path) -> int | None:
    """The port of the receiver running in this very process (the supervisor that starts the
    agent), None when there is none: an agent is never pointed at a receiver that may be gone."""
    data = published(control)
    port = data.get("port")
    if data.get("pid") != os.getpid() or not isinstance(port, int) or not 0 < port < 65536:
        return None
    return port


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def resource_attributes(existing: str | None, job_id: str, lane: str) -> str:
    """The user's OTEL_RESOURCE_ATTRIBUTES with zen's keys (percent-encoded) set."""
    kept = [kv for kv in (existing or "").split(",")
            if kv.strip() and kv.split("=", 1)[0].strip() not in ("zen.job", "zen.lane")]
    ours = [f"zen.job={urllib.parse.quote(job_id, safe='')}"]
    if lane:
        ours.append(f"zen.lane={urllib.parse.quote(lane, safe='')}")
    return ",".join([*kept, *ours])


def user_logs_export(env: Mapping[str, str]) -> dict[str, Any] | None:
    """Where the user's own environment sends Claude Code's logs over OTLP (None: nowhere)."""
    if not _truthy(env.get("CLAUDE_CODE_ENABLE_TELEMETRY")):
        return None
    exporters = [e.strip() for e in (env.get("OTEL_LOGS_EXPORTER") or "").split(",")]
    if "otlp" not in exporters:
        return None
    endpoint = env.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") or ""
    if not endpoint and env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        endpoint = env["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + LOGS_PATH
    protocol = env.get("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    raw = env.get("OTEL_EXPORTER_OTLP_LOGS_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    headers = {}
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            headers[urllib.parse.unquote(key.strip())] = urllib.parse.unquote(value.strip())
    if not endpoint.startswith(("http://", "https://")):
        return None
    return {"endpoint": endpoint, "protocol": protocol, "headers": headers}


def claude_env(control: Path, job_dir: Path, job_id: str, lane: str, env: Mapping[str, str],
               interval_s: float) -> dict[str, str]:
    """The variables that send a Claude Code job's telemetry to this process's receiver ({}
    when none runs here). A user's own OTLP logs export is remembered for the relay."""
    port = live_port(control)
    if port is None:
        return {}
    user = user_logs_export(env)
    relay = job_dir / RELAY_FILE
    if user is not None:
        atomic_write(relay, json.dumps({"v": 1, **user}) + "\n", durable=False, mode=0o600)
    else:
        relay.unlink(missing_ok=True)
    token = job_token(ensure_secret(control), job_id)
    return {
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/json",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": f"http://127.0.0.1:{port}{LOGS_PATH}",
        "OTEL_EXPORTER_OTLP_LOGS_HEADERS": f"Authorization=Bearer {token}",
        "OTEL_LOGS_EXPORT_INTERVAL": str(max(100, round(interval_s * 1000))),
        "OTEL_RESOURCE_ATTRIBUTES": resource_attributes(env.get("OTEL_RESOURCE_ATTRIBUTES"), job_id, lane),
    }


def job_env(control: Path, job_dir: Path, job_id: str, agent: str, lane: str, env: Mapping[str, str],
            observatory: Mapping[str, Any]) -> dict[str, str]:
    """What an agent of kind `agent` adds to its environment for zen's telemetry (zen.yaml
    `observatory`: `telemetry`, `export_interval`)."""
    if agent not in ("claude", "codex") or not observatory.get("telemetry", True):
        return {}
    if agent == "codex":     # the exporter is in its argv (codex_args); the job's name is here
        if live_port(control) is None:
            return {}
        return {"OTEL_RESOURCE_ATTRIBUTES": resource_attributes(env.get("OTEL_RESOURCE_ATTRIBUTES"), job_id, lane)}
    try:
        interval = parse_duration(observatory.get("export_interval") or "1s")
    except ValueError:
        interval = 1.0
    return claude_env(control, job_dir, job_id, lane, env, interval)


def agent_args(control: Path, job_id: str, agent: str, env: Mapping[str, str],
               observatory: Mapping[str, Any]) -> list[str]:
    """Options an agent of kind `agent` takes for zen's telemetry (Codex: `codex_args`)."""
    if agent != "codex" or not observatory.get("telemetry", True):
        return []
    return codex_args(control, job_id, env)


def codex_args(control: Path, job_id: str, env: Mapping[str, str]) -> list[str]:
    """`-c otel.exporter=...` sending a Codex job's OpenTelemetry logs to this process's receiver
    (Codex 0.171 honours it, and OTEL_RESOURCE_ATTRIBUTES); [] when no receiver runs here, or
    when the user's own config.toml exports telemetry already (theirs is left as it is: the
    rollout still counts the job)."""
    port = live_port(control)
    if port is None or _codex_exports(env):
        return []
    token = job_token(ensure_secret(control), job_id)
    exporter = (f'otel.exporter={{otlp-http={{endpoint="http://127.0.0.1:{port}{LOGS_PATH}",'
                f'protocol="json",headers={{Authorization="Bearer {token}"}}}}}}')
    return ["-c", exporter]


def _codex_exports(env: Mapping[str, str]) -> bool:
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME") or "~").expanduser() / ".codex")
    try:
        with (Path(home) / "config.toml").open("rb") as f:
            otel = tomllib.load(f).get("otel")
    except (OSError, ValueError):
        return False
    exporter = otel.get("exporter") if isinstance(otel, dict) else None
    return exporter not in (None, "none")


def relay_of(job_dir: Path) -> dict[str, Any] | None:
    """The user's own OTLP logs endpoint for a job (json only: zen receives http/json)."""
    try:
        data = json.loads((job_dir / RELAY_FILE).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("v") != 1 or not isinstance(data.get("endpoint"), str):
        return None
    return data
