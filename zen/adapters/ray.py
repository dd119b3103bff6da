"""A Ray cluster's job API over plain HTTP (the dashboard's REST endpoints), so the supervisor
never imports ray (79 MB, seconds to import) on its hot path.

    jobs = RayJobs("http://127.0.0.1:8265")
    jobs.version()                                  -> {"ray_version": ..., ...}  (RayUnreachable)
    jobs.submit(submission_id, entrypoint, env=..., resources=..., metadata=...)  (AlreadySubmitted)
    jobs.status(submission_id)                      -> RayJob | None (None: Ray never saw it)
    jobs.logs(submission_id)                        -> the driver's whole log so far
    jobs.stop(submission_id)                        -> True when Ray stopped it (or it had ended)

Ray runs a job once ("Retries ... should be handled by the submitter") and refuses a second
job with the same submission id: the exactly-once submission zen builds on. Every failure
becomes a ZenError whose sentence names the address, so `zen preflight` and a failed start
say what to fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

from zen.errors import AlreadySubmitted, RayError, RayUnreachable

DEFAULT_TIMEOUT_S = 10.0
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "STOPPED"})


@dataclass(frozen=True)
class RayJob:
    submission_id: str
    status: str                      # PENDING | RUNNING | STOPPED | SUCCEEDED | FAILED
    message: str = ""
    exit_code: int | None = None     # the entrypoint's exit code once it ended (Ray >= 2.40)
    error_type: str | None = None
    node_id: str | None = None
    start_ms: int | None = None
    end_ms: int | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RayJob:
        code = data.get("driver_exit_code")
        return cls(submission_id=str(data.get("submission_id") or data.get("job_id") or ""),
                   status=str(data.get("status") or "PENDING"), message=str(data.get("message") or ""),
                   exit_code=int(code) if isinstance(code, int) else None,
                   error_type=data.get("error_type"), node_id=data.get("driver_node_id"),
                   start_ms=data.get("start_time"), end_ms=data.get("end_time"),
                   metadata={str(k): str(v) for k, v in (data.get("metadata") or {}).items()})


def normalise(address: str) -> str:
    """`127.0.0.1:8265` or `http://host:8265/` -> `http://host:8265` (the dashboard's job API)."""
    address = address.strip().rstrip("/")
    if not address:
        raise RayError("the Ray job API address is empty (e.g. http://127.0.0.1:8265)")
    if "://" not in address:
        address = f"http://{address}"
    if not address.startswith(("http://", "https://")):
        raise RayError(f"the Ray job API address {address!r} must be http:// or https://")
    return address


def _detail(r: httpx.Response) -> str:
    text = r.text.strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else f"HTTP {r.status_code}"


class RayJobs:
    def __init__(self, address: str, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 client: httpx.Client | None = None) -> None:
        self.address = normalise(address)
        self._own = client is None
        # keep-alive: the supervisor asks every live job's status on each of its ticks
        self._client = client or httpx.Client(base_url=self.address, timeout=timeout_s)

    def close(self) -> None:
        if self._own:
            self._client.close()

    def __enter__(self) -> RayJobs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            return self._client.request(method, path, **kw)
        except httpx.TimeoutException:
            raise RayUnreachable(f"the Ray cluster at {self.address} did not answer in time "
                                 f"({method} {path})") from None
        except httpx.HTTPError as exc:
            raise RayUnreachable(f"cannot reach the Ray cluster at {self.address} ({exc.__class__.__name__}: "
                                 f"{exc}); is it running? (ray start --head --dashboard-host ...)") from None

    def version(self) -> dict[str, Any]:
        r = self._call("GET", "/api/version")
        if r.status_code != 200:
            raise RayError(f"{self.address} is not a Ray job API ({_detail(r)})")
        try:
            data = r.json()
        except ValueError:
            raise RayError(f"{self.address} is not a Ray job API (it did not answer JSON)") from None
        if not isinstance(data, dict) or "ray_version" not in data:
            raise RayError(f"{self.address} is not a Ray job API (no ray_version in its answer)")
        return data

    def submit(self, submission_id: str, entrypoint: str, *, env: dict[str, str] | None = None,
               resources: dict[str, float] | None = None, num_cpus: float | None = None,
               metadata: dict[str, str] | None = None) -> str:
        body: dict[str, Any] = {"entrypoint": entrypoint, "submission_id": submission_id,
                                "metadata": dict(metadata or {}), "runtime_env": {"env_vars": dict(env or {})}}
        if resources:
            body["entrypoint_resources"] = {k: float(v) for k, v in resources.items()}
        if num_cpus is not None:
            body["entrypoint_num_cpus"] = float(num_cpus)
        r = self._call("POST", "/api/jobs/", json=body)
        if r.status_code == 200:
            return str(r.json().get("submission_id") or submission_id)
        if "already exists" in r.text:
            raise AlreadySubmitted(f"Ray already has a job {submission_id}")
        raise RayError(f"Ray refused job {submission_id}: {_detail(r)}")

    def status(self, submission_id: str) -> RayJob | None:
        r = self._call("GET", f"/api/jobs/{submission_id}")
        if r.status_code == 404:
            return None
        if r.status_code != 200:
            raise RayError(f"cannot read job {submission_id} from {self.address}: {_detail(r)}")
        return RayJob.from_json(r.json())

    def logs(self, submission_id: str) -> str:
        r = self._call("GET", f"/api/jobs/{submission_id}/logs")
        if r.status_code == 404:
            return ""
        if r.status_code != 200:
            raise RayError(f"cannot read the logs of job {submission_id} from {self.address}: {_detail(r)}")
        return str(r.json().get("logs") or "")

    def stop(self, submission_id: str) -> bool:
        r = self._call("POST", f"/api/jobs/{submission_id}/stop")
        if r.status_code == 404:
            return False
        if r.status_code != 200:
            raise RayError(f"cannot stop job {submission_id} on {self.address}: {_detail(r)}")
        return bool(r.json().get("stopped"))

    def list(self) -> list[RayJob]:
        r = self._call("GET", "/api/jobs/")
        if r.status_code != 200:
            raise RayError(f"cannot list the jobs of {self.address}: {_detail(r)}")
        return [RayJob.from_json(d) for d in r.json() if d.get("type") == "SUBMISSION"]


__all__ = ["TERMINAL", "AlreadySubmitted", "RayError", "RayJob", "RayJobs", "RayUnreachable", "normalise"]
