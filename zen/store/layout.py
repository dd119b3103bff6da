"""Every file and folder name of a home and of a job directory, defined once (DESIGN section 2).

    <home>/zen.yaml  policy/  incidents/  jobs/<id>/  spool/{tmp,new,cur}/  worktrees/<id>/
           control/{KILL,supervisor.lock,heartbeat,...}  approvals/{pending,granted,denied}/
           evidence/<domain>.jsonl  logs/  coord/

`Home` names the home's parts, `JobPaths` a job directory's files. Anything that builds a path
into a home asks these two; nothing else spells a name.

Stdlib only and cheap to import: the guard hook and `zen hook` import it on every agent action
(plain classes with properties, no dataclasses, which would bring `inspect` along).
"""

from __future__ import annotations

import os
from pathlib import Path

# -- the home ------------------------------------------------------------------------------------
CONFIG = "zen.yaml"
POLICY = "policy"
GUARDIAN_POLICY = "guardian.yaml"             # policy/guardian.yaml
AUTONOMY_POLICY = "autonomy.yaml"             # policy/autonomy.yaml
INCIDENTS = "incidents"
JOBS = "jobs"
SPOOL = "spool"
SPOOL_TMP, SPOOL_NEW, SPOOL_CUR = "tmp", "new", "cur"
SPOOL_INVALID_SUFFIX = ".invalid"             # (older zen) a spooled task that could not be read
SPOOL_QUARANTINE = "quarantine"               # spool/quarantine/<file> + <file>.reason: rejected entries
SPOOL_REASON_SUFFIX = ".reason"
WORKTREES = "worktrees"
CONTROL = "control"
EVIDENCE = "evidence"
LOGS = "logs"
COORD = "coord"                               # leases, outbox (DESIGN 10)
APPROVALS = "approvals"
APPROVAL_STATES = ("pending", "granted", "denied")

# control/
KILL = "KILL"
SUPERVISOR_LOCK = "supervisor.lock"
HEARTBEAT = "heartbeat"
BREAKER = "breaker.json"
BREAKER_LOCK = ".breaker.lock"
CONFIG_LOCK = "config.lock"
API_TOKEN = "api-token"                       # zen serve's bearer token (DESIGN 11)
SERVER_INFO = "server.json"                   # the running zen serve's pid, host and port
LOGINS = "logins.json"                        # the dashboard's login sessions and used tickets (0600)
LOGINS_LOCK = "logins.lock"
SERVER_PORT = 19840                           # zen serve's default port
GUARD_SOCKET = "guard.sock"                   # the resident guardian's socket (zen guard serve)
GUARD_SERVER_LOCK = "guard.lock"              # flock held by the one resident guardian
GUARD_WALL_DIR = "guard-wall"                 # the socket and the lock again, alone: bound into zen's walls
OTLP_RECEIVER = "otlp.json"                   # where the supervisor's OTLP receiver listens (DESIGN 8)
TEAM_KEY = "team-key"                         # proves a person speaks for a job to zen mcp serve
OTLP_SECRET = "otlp-secret"                   # signs each job's telemetry token (no agent reads it)
PANE_DIED = "pane-died"                       # touched by zen's tmux server whenever an agent's pane dies
SERVER_LOCK = "server.lock"                   # flock held by the one `zen serve` of the home
AUTONOMY_LOCK = "autonomy.lock"               # one change of policy/autonomy.yaml at a time
GUARDIAN_EDIT_LOCK = "guardian-edit.lock"     # one edit of policy/guardian.yaml at a time
REMOTE_ENDPOINT = "remote-endpoint.json"      # the supervisor's endpoint for Ray workers: address, token
REMOTE_SWITCH = "remote-switch.json"          # on a worker's home: where its guardian reads the kill switch
TEAMS = "teams"                               # control/teams/ (DESIGN 13)
TEAMS_ACTIVE = "active"                       # control/teams/active/<worker id>.json
TEAMS_REQUESTS = "requests"                   # control/teams/requests/<parent>/<hash>.json
TEAMS_LOCK = ".lock"                          # one spawn decision at a time in the home
ADOPT = "adopt"                               # control/adopt/<job>: a recovered session to watch

# coord/ (DESIGN 10): coord/<lane>/leases/<hash>.json, coord/outbox/{,sent/,dead/}<id>.json
COORD_LEASES = "leases"
COORD_LANE_LOCK = ".lock"                     # serialises taking, renewing and releasing a lane's leases
OUTBOX = "outbox"
OUTBOX_SENT = "sent"
OUTBOX_DEAD = "dead"
OUTBOX_CURSOR = ".cursor.json"                # how far the timelines have been read into the outbox
OUTBOX_LOCK = ".lock"

# logs/
CONTROL_LOG = "control.jsonl"                 # home-wide events (supervisor, kill switch)
CONTROL_LOG_LOCK = ".control.lock"
GUARD_AUDIT_LOG = "guard-audit.jsonl"         # guard decisions made outside any job
SUPERVISOR_LOG = "supervisor.log"
GUARD_SERVER_LOG = "guard-server.log"         # the resident guardian's own errors
SERVER_LOG = "server.log"                     # zen serve's own log (detached or foreground)
GUARD_CACHE = ".guard-cache.json"             # the compiled policy, rebuilt when a source changes

# the folders `zen init` creates, in order
SUBDIRS = (
    POLICY,
    INCIDENTS,
    JOBS,
    f"{SPOOL}/{SPOOL_TMP}",
    f"{SPOOL}/{SPOOL_NEW}",
    f"{SPOOL}/{SPOOL_CUR}",
    f"{SPOOL}/{SPOOL_QUARANTINE}",
    WORKTREES,
    CONTROL,
    *(f"{APPROVALS}/{s}" for s in APPROVAL_STATES),
    EVIDENCE,
    LOGS,
)

# -- file modes: zen's records are the user's alone ---------------------------------------------
# zen's own processes run with umask 077 (zen/__main__.py), so every file and folder they create
# in a home is 0600/0700 (L16); the umask the user had is kept in USER_UMASK_ENV for what is the
# user's work rather than zen's records: an agent's pane, its worktree's checkout, a lane's setup
PRIVATE_UMASK = 0o077
PRIVATE_FILE = 0o600
USER_UMASK_ENV = "ZEN_USER_UMASK"


def go_private() -> int:
    """At the start of a zen process: remember the user's umask (once, for the process tree) and
    take PRIVATE_UMASK. Returns the user's umask."""
    old = os.umask(PRIVATE_UMASK)
    if USER_UMASK_ENV not in os.environ:
        os.environ[USER_UMASK_ENV] = f"{old:03o}"
    return user_umask()


def user_umask() -> int:
    """The user's own umask (as zen's first process found it); never one that lets others write."""
    try:
        value = int(os.environ.get(USER_UMASK_ENV, "022"), 8)
    except ValueError:
        value = 0o022
    return (value & 0o777) | 0o002


# -- a job directory: jobs/<id>/ ------------------------------------------------------------------
TASK = "task.yaml"
EVENTS = "events.jsonl"
STATE = "state.json"
PANE_LOG = "pane.log"
HANDOFF = "handoff.md"
PROMPT = "prompt.txt"                         # the task's prompt as given ($ZEN_PROMPT_FILE)
REVIEW = "review.md"
EXIT_FILE = "exit_code"                       # the pane wrapper's record of the agent's exit
METRICS = "metrics.json"                      # observatory snapshot (DESIGN 8)
OBSERVE = "observe"                           # ledgers of the agent's own files read (DESIGN 8)
USAGE_LOCK = ".usage.lock"                    # one usage reckoning at a time per job
METRICS_LOCK = ".metrics.lock"                # one writer of metrics.json at a time
EVENTS_LOCK = ".lock"                         # serialises appends to events.jsonl
HARVEST_LOCK = ".harvest.lock"
AUTOHARVEST_LOCK = ".autoharvest.lock"
CHECKS_LOCK = ".checks.lock"                  # one run of the lane's checks on a job at a time
CONTROL_LOCK = ".control.lock"                # one control action (send, finish, cancel, harvest) at a time
CLAUDE_SETTINGS = "claude-settings.json"      # the hooks Claude Code (and the sim agent) run
GEMINI_SETTINGS = "gemini-settings.json"      # the hooks Gemini CLI runs
SIM_SCRIPT = "sim-script.json"                # the steps the simulated agent follows
GEMINI_HOME = "gemini-home"                   # $GEMINI_CLI_HOME of the job's Gemini CLI
OTEL_RELAY = "otel-relay.json"                # where a Codex job's telemetry is relayed (DESIGN 8)
REMOTE_LOG = "remote-log.json"                # how far the Ray job's log has been read into pane.log
MCP_CONFIG = "mcp-config.json"                # zen's MCP server as the agent CLI is told of it
RECOVERY_HANDOFF = "recovery.md"              # zen recover's handoff to the new session
RECOVERY_LOCK = ".recover.lock"               # the recovery lease: one recovery at a time

# -- a job's worktree: worktrees/<id>/ ------------------------------------------------------------
WORKTREE_PRIVATE = ".zen"                     # zen's own files in a worktree (never harvested)
WORKTREE_TMP = ".zen-tmp"                     # the agent's $TMPDIR
AIDER_ANALYTICS = "aider-analytics.jsonl"     # in WORKTREE_TMP: aider's analytics log, read for usage


def valid_job_id(job_id: str | None) -> bool:
    """A job id that names one directory under jobs/ (no separator, no dot-name)."""
    return bool(job_id) and "/" not in str(job_id) and not str(job_id).startswith(".")


class JobPaths:
    """The files of one job directory."""

    __slots__ = ("dir",)

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)

    def __repr__(self) -> str:
        return f"JobPaths({str(self.dir)!r})"

    @property
    def task(self) -> Path:
        return self.dir / TASK

    @property
    def events(self) -> Path:
        return self.dir / EVENTS

    @property
    def state(self) -> Path:
        return self.dir / STATE

    @property
    def pane_log(self) -> Path:
        return self.dir / PANE_LOG

    @property
    def handoff(self) -> Path:
        return self.dir / HANDOFF

    @property
    def prompt(self) -> Path:
        return self.dir / PROMPT

    @property
    def review(self) -> Path:
        return self.dir / REVIEW

    @property
    def exit_file(self) -> Path:
        return self.dir / EXIT_FILE

    @property
    def metrics(self) -> Path:
        return self.dir / METRICS

    @property
    def observe(self) -> Path:
        return self.dir / OBSERVE

    @property
    def usage_lock(self) -> Path:
        return self.dir / USAGE_LOCK

    @property
    def metrics_lock(self) -> Path:
        return self.dir / METRICS_LOCK

    @property
    def lock(self) -> Path:
        return self.dir / EVENTS_LOCK

    @property
    def harvest_lock(self) -> Path:
        return self.dir / HARVEST_LOCK

    @property
    def autoharvest_lock(self) -> Path:
        return self.dir / AUTOHARVEST_LOCK

    @property
    def control_lock(self) -> Path:
        return self.dir / CONTROL_LOCK

    @property
    def claude_settings(self) -> Path:
        return self.dir / CLAUDE_SETTINGS

    @property
    def gemini_settings(self) -> Path:
        return self.dir / GEMINI_SETTINGS

    @property
    def sim_script(self) -> Path:
        return self.dir / SIM_SCRIPT

    @property
    def remote_log(self) -> Path:
        return self.dir / REMOTE_LOG

    @property
    def mcp_config(self) -> Path:
        return self.dir / MCP_CONFIG

    @property
    def recovery_handoff(self) -> Path:
        return self.dir / RECOVERY_HANDOFF

    @property
    def recovery_lock(self) -> Path:
        return self.dir / RECOVERY_LOCK


class Home:
    """A zen home directory and the names of its parts. Immutable, hashable."""

    __slots__ = ("root",)
    root: Path

    def __init__(self, root: str | os.PathLike[str]) -> None:
        object.__setattr__(self, "root", Path(root))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Home is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Home) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    def __repr__(self) -> str:
        return f"Home(root={self.root!r})"

    # -- top level ---------------------------------------------------------------------------------
    @property
    def config_path(self) -> Path:
        return self.root / CONFIG

    @property
    def jobs(self) -> Path:
        return self.root / JOBS

    @property
    def spool(self) -> Path:
        return self.root / SPOOL

    @property
    def spool_tmp(self) -> Path:
        return self.spool / SPOOL_TMP

    @property
    def spool_new(self) -> Path:
        return self.spool / SPOOL_NEW

    @property
    def spool_cur(self) -> Path:
        return self.spool / SPOOL_CUR

    @property
    def spool_quarantine(self) -> Path:
        return self.spool / SPOOL_QUARANTINE

    @property
    def worktrees(self) -> Path:
        return self.root / WORKTREES

    @property
    def control(self) -> Path:
        return self.root / CONTROL

    @property
    def policy(self) -> Path:
        return self.root / POLICY

    @property
    def guardian_policy(self) -> Path:
        return self.policy / GUARDIAN_POLICY

    @property
    def autonomy_policy(self) -> Path:
        return self.policy / AUTONOMY_POLICY

    @property
    def incidents(self) -> Path:
        return self.root / INCIDENTS

    @property
    def approvals(self) -> Path:
        return self.root / APPROVALS

    def approvals_in(self, state: str) -> Path:
        """approvals/pending, approvals/granted or approvals/denied."""
        return self.approvals / state

    @property
    def evidence(self) -> Path:
        return self.root / EVIDENCE

    @property
    def logs(self) -> Path:
        return self.root / LOGS

    @property
    def coord(self) -> Path:
        return self.root / COORD

    def coord_lane(self, lane_dir: str) -> Path:
        """coord/<lane>/ (`lane_dir` is the lane's folder name: zen.coord.leases.lane_slug)."""
        return self.coord / lane_dir

    @property
    def outbox(self) -> Path:
        return self.coord / OUTBOX

    # -- control/ and logs/ ----------------------------------------------------------------------
    @property
    def kill_file(self) -> Path:
        return self.control / KILL

    @property
    def supervisor_lock(self) -> Path:
        return self.control / SUPERVISOR_LOCK

    @property
    def heartbeat(self) -> Path:
        return self.control / HEARTBEAT

    @property
    def breaker(self) -> Path:
        return self.control / BREAKER

    @property
    def teams(self) -> Path:
        return self.control / TEAMS

    @property
    def adopt(self) -> Path:
        return self.control / ADOPT

    @property
    def team_key(self) -> Path:
        return self.control / TEAM_KEY

    @property
    def breaker_lock(self) -> Path:
        return self.control / BREAKER_LOCK

    @property
    def config_lock(self) -> Path:
        return self.control / CONFIG_LOCK

    @property
    def api_token(self) -> Path:
        return self.control / API_TOKEN

    @property
    def server_lock(self) -> Path:
        return self.control / SERVER_LOCK

    @property
    def server_info(self) -> Path:
        return self.control / SERVER_INFO

    @property
    def logins(self) -> Path:
        return self.control / LOGINS

    @property
    def logins_lock(self) -> Path:
        return self.control / LOGINS_LOCK

    @property
    def autonomy_lock(self) -> Path:
        return self.control / AUTONOMY_LOCK

    @property
    def guardian_edit_lock(self) -> Path:
        return self.control / GUARDIAN_EDIT_LOCK

    @property
    def remote_endpoint(self) -> Path:
        return self.control / REMOTE_ENDPOINT

    @property
    def remote_switch(self) -> Path:
        return self.control / REMOTE_SWITCH

    @property
    def control_log(self) -> Path:
        return self.logs / CONTROL_LOG

    @property
    def control_log_lock(self) -> Path:
        return self.logs / CONTROL_LOG_LOCK

    @property
    def guard_audit_log(self) -> Path:
        return self.logs / GUARD_AUDIT_LOG

    @property
    def supervisor_log(self) -> Path:
        return self.logs / SUPERVISOR_LOG

    @property
    def server_log(self) -> Path:
        return self.logs / SERVER_LOG

    @property
    def guard_cache(self) -> Path:
        return self.logs / GUARD_CACHE

    @property
    def pane_died(self) -> Path:
        return self.control / PANE_DIED

    @property
    def tmux_socket(self) -> str:
        """zen's private tmux server for this home: never the user's default server."""
        import hashlib  # 2 ms, and the hook path (which imports this module) never needs it

        digest = hashlib.sha1(str(self.root).encode()).hexdigest()[:10]
        return f"zen-{digest}"

    # -- per job -----------------------------------------------------------------------------------
    def job_dir(self, job_id: str) -> Path:
        return self.jobs / job_id

    def job(self, job_id: str) -> JobPaths:
        return JobPaths(self.jobs / job_id)

    def worktree(self, job_id: str) -> Path:
        return self.worktrees / job_id

    def evidence_file(self, domain: str) -> Path:
        return self.evidence / f"{domain}.jsonl"

    def evidence_lock(self, domain: str) -> Path:
        """evidence/.<domain>.lock: one append to a domain's evidence at a time."""
        return self.evidence / f".{domain}.lock"


# -- the order of the home's locks --------------------------------------------------------------
# Every flock of a home, outermost first: a process that holds one may take only those after it
# (two processes that both follow one order never wait on each other in a circle). Each is named
# by its path inside the home, with job/ for jobs/<id>/ and lane/ for coord/<lane>/. Asserted
# across a real dispatch -> harvest by tests/supervisor/test_lock_order.py.
#
#   control/supervisor.lock   the supervisor, for its whole life (one per home)
#   control/guard.lock        the resident guardian, for its whole life (zen guard serve)
#   control/server.lock       zen serve, for its whole life
#   control/teams/.lock       one team spawn decision at a time; records in the jobs it starts
#   job/.control.lock         one control action on a job (send, finish, cancel, harvest, the
#                             kill switch's stop, the supervisor's settling of an ended agent)
#   job/.recover.lock         zen recover's lease on a job
#   job/.remote.lock          a turn on a Ray cluster, followed and settled (remote/turns.py)
#   job/.autoharvest.lock     the harvest due after an agent's exit, decided once
#   job/.harvest.lock         one harvest of a worktree at a time
#   job/.checks.lock          one run of the lane's checks on a job's harvest (job/checks.py)
#   lane/.lock                a lane's file leases, taken, renewed and released
#   job/.usage.lock           one usage reckoning at a time
#   job/.metrics.lock         one writer of metrics.json
#   job/.lock                 the timeline: an append, state.json brought up to date
#   jobs/.index.lock          the index of finished jobs (updated as state.json is)
#   coord/outbox/.lock        the webhooks' outbox
#   control/config.lock ... control/logins.lock   one writer of one home-wide file each; a leaf
#   logs/.control.lock        an append to the home's control log; the last of all
LOCK_ORDER: tuple[str, ...] = (
    f"{CONTROL}/{SUPERVISOR_LOCK}",
    f"{CONTROL}/{GUARD_SERVER_LOCK}",
    f"{CONTROL}/{SERVER_LOCK}",
    f"{CONTROL}/{TEAMS}/{TEAMS_LOCK}",
    f"job/{CONTROL_LOCK}",
    f"job/{RECOVERY_LOCK}",
    "job/.remote.lock",
    f"job/{AUTOHARVEST_LOCK}",
    f"job/{HARVEST_LOCK}",
    f"job/{CHECKS_LOCK}",
    f"lane/{COORD_LANE_LOCK}",
    f"job/{USAGE_LOCK}",
    f"job/{METRICS_LOCK}",
    f"job/{EVENTS_LOCK}",
    f"{JOBS}/.index.lock",
    f"{COORD}/{OUTBOX}/{OUTBOX_LOCK}",
    f"{CONTROL}/{CONFIG_LOCK}",
    f"{CONTROL}/{BREAKER_LOCK}",
    f"{CONTROL}/{AUTONOMY_LOCK}",
    f"{CONTROL}/{GUARDIAN_EDIT_LOCK}",
    f"{CONTROL}/{LOGINS_LOCK}",
    f"{LOGS}/{CONTROL_LOG_LOCK}",
)


def lock_name(rel: str) -> str:
    """A lock's place in LOCK_ORDER from its path inside the home: one name for the same lock of
    every job (job/.lock) and of every lane (lane/.lock)."""
    parts = rel.split("/")
    if len(parts) == 3 and parts[0] == JOBS:
        return f"job/{parts[2]}"
    if len(parts) == 3 and parts[0] == COORD and parts[1] != OUTBOX and parts[2] == COORD_LANE_LOCK:
        return f"lane/{COORD_LANE_LOCK}"
    return rel
