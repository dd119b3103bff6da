"""zen.yaml: read with defaults, rewritten with the user's comments kept (ruamel round-trip).

Parsing it costs ruamel's import and a round-trip parse, most of what a short command would
take: a parse that is plain data is kept in logs/.config-cache.json with the text of the
zen.yaml it came from (by `edit_config`, zen init and the supervisor: read commands never write),
and `Config.load` takes it from there while zen.yaml holds that very text (a cache: a missing
one, or one of another text, only costs the parse). Writers (`edit_config`) always parse the
file itself, comments and all.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

from zen.core.durations import parse_duration
from zen.core.sizes import parse_size
from zen.errors import NotFound, ZenError
from zen.store.atomic import atomic_write, flocked
from zen.store.layout import Home

DEFAULT_CONFIG = """\
# zen home configuration. zen rewrites this file when you add or remove lanes and keeps your
# comments. Durations accept forms like 90s, 30m, 1h30m, 7d.
zen: 1

# Lanes: the git repositories agents work on. zen never edits a lane's own working tree: every
# job gets its own worktree under worktrees/<job id>. Add one with `zen lane add NAME PATH`.
#   path:    the repository's main checkout
#   base:    the branch new worktrees start from
#   domain:  the autonomy domain (policy/autonomy.yaml) the lane's jobs belong to
#   setup:   a command run in each new worktree before the agent starts (e.g. "npm ci")
#   include: untracked files copied from the main checkout into each worktree (e.g. ".env.local")
#   executor: where its agents' turns run: local (tmux here, the default) or ray, e.g.
#             {kind: ray, address: http://10.0.0.5:8265, resources: {zen_slot: 1}}
#   remote:  for executor ray, the bare repository the cluster's nodes clone from and push to
lanes: {}

# Defaults for tasks that do not say otherwise.
defaults:
  agent: sim            # claude | codex | aider | gemini | sim | cmd
  priority: 3           # 1 (first) .. 5
  timeout: 30m          # a longer-running agent is stopped (TERM, grace, KILL) and harvested
  domain: code          # domain of tasks given --repo instead of a lane

# The supervisor (zen supervise).
supervisor:
  max_concurrent_tasks: 5   # agents alive at once; more tasks wait in the queue
  max_queue_size: 100       # zen dispatch refuses new tasks while this many are waiting
  tick: 0.25s               # how often live jobs are checked between events
  idle_after: 2s            # no new output for this long = the agent waits for a human
  kill_grace: 5s            # between TERM and KILL when an agent is stopped
  auto_cleanup: false       # remove a job's worktree after a successful harvest (branches stay)

# Limits that keep one task, or one full disk, from stopping the rest.
limits:
  max_prompt_size: 1MiB     # zen dispatch refuses a longer prompt (a prompt reaches its agent as a file)
  min_free_disk: 512MiB     # preflight will not start an agent with less free space under the home

# Retries of starts that fail (spawn error, preflight failure, agent gone before its first turn).
retry:
  max_retries: 0            # default for tasks that do not set their own
  backoff_base: 5s          # first delay; then multiplied by the factor, up to the cap
  backoff_factor: 2
  backoff_cap: 5m

# Circuit breaker on automatic work (retries, spawns requested by agents, not by humans).
breaker:
  window: 10m               # rolling window the automatic starts are counted in
  max_automatic: 20         # more than this in the window opens the breaker
  hold: 15m                 # while open, automatic work stays queued; human work never waits
  limits:                   # per kind of automatic work, in the same window (agent teams):
    spawn: 20               #   workers started by agents (agent_spawn)
    continuation: 60        #   goal turns the supervisor continues
    recovery: 5             #   automatic recoveries (teams.recovery: auto)
    worker_turn: 120        #   turns of workers' goals

# zen gc: which harvested jobs count as old.
gc:
  older_than: 7d

# The observatory (zen metrics): how long zen gc keeps each job's minute-by-minute detail
# (latency samples, per-minute counts); per-job totals are kept for good. With telemetry on, the
# supervisor receives its Claude Code jobs' OpenTelemetry logs on 127.0.0.1 (control/otlp.json
# says where): every API call, error and tool result, as it happens. Your own OTEL_* metrics
# settings are left alone, and logs you export over OTLP http/json are forwarded to you.
observatory:
  history_retention: 7d
  telemetry: true           # false: no receiver; usage comes from transcripts and rollouts
  export_interval: 1s       # how often an agent sends what it has (OTEL_LOGS_EXPORT_INTERVAL)

# Notices when a job needs you (a question, an approval, a dialog, a limit reached) or ends on its
# own, sent by the supervisor once per wait, whether or not `zen watch` runs (each is recorded in
# the job's timeline as notify.sent, so a restart never repeats one).
notify:
  desktop: true             # notify-send, where it is installed
  command: ""               # e.g. "ntfy publish me" or "cat >> ~/zen-notices.jsonl": run by sh with
                            # the notice as JSON on stdin and ZEN_NOTIFY_{KIND,JOB,NAME,REASON,TITLE,TEXT}
  reasons: [question, approval, dialog, limit, idle]   # idle: only when the agent's hook says so
  ended: true               # also announce jobs that end (not the ones you finish or cancel)

# The coordinator: many agents on one lane (DESIGN section 10). A job leases a file the first
# time it writes it (or explicitly: zen lock, the task's `paths:`); another job's write to a
# leased file is then denied, warned or recorded. Leases end the moment their job ends.
coordinator:
  leases: true              # false: no leases are taken or enforced
  lock_timeout: 5m          # a lease's expiry, renewed while its job lives (only a backstop)
  conflict_resolution: deny # deny | warn (allowed, the agent is told) | last-write-wins (recorded)
  scan_interval: 3s         # how often live jobs' changed files are compared (and after each turn)
  notification_webhook: ""  # e.g. https://hooks.slack.com/services/...: JSON POSTs from coord/outbox/
  notification_secret: ""   # signs each POST (HMAC-SHA256, webhook-signature); env:NAME reads $NAME
  notification_events: [waiting, finished, failed, denied, conflict, kill-switch]
                            # waiting: a job needs you; finished/failed: a job ended; denied: the
                            # guardian refused an agent; conflict: merge-tree predicts one
  notification_lanes: []    # only jobs of these lanes (empty: all)
  webhook_timeout: 10s      # one POST
  webhook_retries: 10       # attempts before a notification goes to coord/outbox/dead/
  webhook_backoff: 2s       # first retry delay, doubled each time up to webhook_backoff_cap
  webhook_backoff_cap: 10m

# Turns on other machines (lanes with `executor: ray`; README "More than one machine").
remote:
  listen: 127.0.0.1:0       # where the supervisor answers its Ray workers' guardians (the kill
                            # switch); port 0: any free one, kept across restarts
  advertise: ""             # the URL the workers reach it at, if not the listen address
  workdir: ""               # the nodes' scratch folder (default ~/.cache/zen/remote)

# Agent teams (DESIGN 13): jobs whose agents start worker jobs through zen's MCP tools
# (zen mcp serve, registered for every job's agent), and goals continued until done.
teams:
  max_active_workers: 4     # workers alive (or waiting to start) at once in this home, 1..32; a
                            # spawn over it is refused and records nothing
  max_depth: 2              # a worker's workers' ... : 1 = workers may not spawn their own
  wait_max: 10m             # the longest one agent_wait call holds (it returns sooner when done)
  goal_blocked_turns: 3     # the same blocker this many turns in a row stops a goal as blocked,
  goal_blocked_span: 60s    #   but only once those turns span at least this long
  goal_max_turns: 200       # a goal's turns at most, whatever else (a hard cap)
  recovery: manual          # manual (zen recover JOB) | auto (a dead agent mid-goal is recovered)
  clock_file: ""            # tests and replays only: read the goals' clock (epoch seconds) from
                            # this file instead of the system clock

# Per-agent settings. `command` is the program; `env` adds variables, `drop_env` removes
# variables the supervisor's environment would otherwise pass on.
agents:
  claude:
    command: claude
    env: {}
    drop_env: []
  codex:
    command: codex
  aider:
    command: aider
  gemini:
    command: gemini

# Prices in USD per million tokens. zen knows the models of a dated table (zen/observe/prices.py);
# an entry here overrides a model's figures (input, output, cache_read, cache_write, cache_write_1h,
# long_context: {above, input, ...}); `default` prices the models the table does not know (their
# usage is reported as unpriced).
prices:
  default:
    input: 3.0
    output: 15.0
    cache_write: 3.75
    cache_read: 0.30
"""

_DEFAULTS: dict[str, Any] = {
    "defaults": {"agent": "sim", "priority": 3, "timeout": "30m", "domain": "code"},
    "supervisor": {
        "max_concurrent_tasks": 5,
        "max_queue_size": 100,
        "tick": "0.25s",
        "idle_after": "2s",
        "kill_grace": "5s",
        "auto_cleanup": False,
    },
    "limits": {"max_prompt_size": "1MiB", "min_free_disk": "512MiB"},
    "retry": {"max_retries": 0, "backoff_base": "5s", "backoff_factor": 2, "backoff_cap": "5m"},
    "breaker": {"window": "10m", "max_automatic": 20, "hold": "15m",
                "limits": {"spawn": 20, "continuation": 60, "recovery": 5, "worker_turn": 120}},
    "gc": {"older_than": "7d"},
    "observatory": {"history_retention": "7d", "telemetry": True, "export_interval": "1s"},
    "notify": {"desktop": True, "command": "", "reasons": ["question", "approval", "dialog", "limit", "idle"],
               "ended": True},
    "coordinator": {
        "leases": True,
        "lock_timeout": "5m",
        "conflict_resolution": "deny",
        "scan_interval": "3s",
        "notification_webhook": "",
        "notification_secret": "",
        "notification_events": ["waiting", "finished", "failed", "denied", "conflict", "kill-switch"],
        "notification_lanes": [],
        "webhook_timeout": "10s",
        "webhook_retries": 10,
        "webhook_backoff": "2s",
        "webhook_backoff_cap": "10m",
    },
    "remote": {"listen": "127.0.0.1:0", "advertise": "", "workdir": ""},
    "teams": {"max_active_workers": 4, "max_depth": 2, "wait_max": "10m", "goal_blocked_turns": 3,
              "goal_blocked_span": "60s", "goal_max_turns": 200, "recovery": "manual", "clock_file": ""},
    "agents": {},
    "prices": {"default": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.30}},
}


def _yaml() -> Any:
    from ruamel.yaml import YAML  # 30 ms: only commands that read zen.yaml pay for it

    y = YAML()
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    return y


_CACHE: dict[tuple[object, ...], Any] = {}
CACHE_FILE = ".config-cache.json"              # in logs/
CACHE_VERSION = 1


def _plain(data: Any) -> Any:
    """zen.yaml's data as plain dicts and lists for the in-process cache, as the read commands
    get it from the file cache (copying ruamel's round-trip document took ~10 ms, on every start
    of the supervisor); data that is not plain (a YAML timestamp, a tag) is kept as it came."""
    try:
        plain = json.loads(json.dumps(data, ensure_ascii=False))
    except (TypeError, ValueError):
        return copy.deepcopy(data)
    return plain if plain == data else copy.deepcopy(data)


def _copy(data: Any) -> Any:
    """A copy of the cached data; plain containers are copied by hand (deepcopy is 10x slower)."""
    if isinstance(data, dict) and type(data) is dict:
        return {k: _copy(v) for k, v in data.items()}
    if type(data) is list:
        return [_copy(v) for v in data]
    if isinstance(data, (str, int, float, bool)) or data is None:
        return data
    return copy.deepcopy(data)


def _cached(home: Home, source: str) -> Any:
    """zen.yaml's data from logs/.config-cache.json, when it was parsed from `source`."""
    try:
        with open(home.logs / CACHE_FILE, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("v") != CACHE_VERSION or data.get("text") != source:
        return None
    return data.get("data") if isinstance(data.get("data"), dict) else None


def _keep(home: Home, source: str, data: Any) -> None:
    try:
        text = json.dumps({"v": CACHE_VERSION, "text": source, "data": data}, ensure_ascii=False)
    except (TypeError, ValueError):
        return  # not plain data (a YAML timestamp, a tag): parsed each time
    if json.loads(text)["data"] != data:
        return
    with contextlib.suppress(OSError):
        home.logs.mkdir(parents=True, exist_ok=True)
        atomic_write(home.logs / CACHE_FILE, text + "\n", cache=True)   # checked against zen.yaml's text


class Config:
    """zen.yaml as a round-trip document plus typed accessors that fall back to defaults."""

    def __init__(self, home: Home, data: Any) -> None:
        self.home = home
        self.data = data

    @classmethod
    def load(cls, home: Home, *, keep: bool = False) -> Config:
        """zen.yaml, parsed again only when the file changed (the supervisor reads it per start).
        `keep`: a process that writes the home anyway (the supervisor, zen init) leaves its parse
        in logs/.config-cache.json for the read commands, which never write."""
        path = home.config_path
        try:
            st = path.stat()
            key = (str(path), st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        hit = _CACHE.get(key) if key is not None else None   # one lookup: spawn threads read it too
        if hit is not None:
            return cls(home, _copy(hit))  # callers may edit their copy
        try:
            source = path.read_text()
        except OSError:
            source = None
        data = _cached(home, source) if source is not None else None
        if data is not None:
            cfg = cls(home, data)
            cfg._check()
        else:
            cfg = cls._parse(home, source)
            if source is not None and keep:
                _keep(home, source, cfg.data)
        if key is not None:
            _CACHE.clear()
            _CACHE[key] = _plain(cfg.data)
        return cfg

    @classmethod
    def _parse(cls, home: Home, text: str | None = None) -> Config:
        text = home.config_path.read_text() if text is None else text
        try:
            data = _yaml().load(text)
        except Exception as exc:
            raise ZenError(f"{home.config_path} is not valid YAML: {str(exc).splitlines()[0]}") from None
        if data is None:
            data = _yaml().load(DEFAULT_CONFIG)
        cfg = cls(home, data)
        cfg._check()
        return cfg

    def _check(self) -> None:
        if not hasattr(self.data, "get"):
            raise ZenError(f"{self.home.config_path} must be a mapping")
        version = self.data.get("zen", 1)
        if version != 1:
            raise ZenError(f"{self.home.config_path} has format version {version}; this zen reads version 1")

    def section(self, name: str) -> dict[str, Any]:
        merged = dict(_DEFAULTS.get(name, {}))
        found = self.data.get(name) or {}
        merged.update(dict(found))
        return merged

    def get(self, section: str, key: str) -> Any:
        return self.section(section)[key]

    def seconds(self, section: str, key: str) -> float:
        value = self.get(section, key)
        try:
            return parse_duration(value)
        except ValueError as exc:
            raise ZenError(f"zen.yaml {section}.{key}: {exc}") from None

    def size(self, section: str, key: str) -> int:
        """A size in bytes ("1MiB", "512KiB", a bare number of bytes)."""
        value = self.get(section, key)
        try:
            return parse_size(value)
        except ValueError as exc:
            raise ZenError(f"zen.yaml {section}.{key}: {exc}") from None

    @property
    def lanes(self) -> dict[str, dict[str, Any]]:
        lanes = self.data.get("lanes") or {}
        return {str(name): dict(spec or {}) for name, spec in lanes.items()}

    def lane(self, name: str) -> dict[str, Any]:
        """The lane `name` of zen.yaml, or NotFound with one sentence naming the known ones."""
        lanes = self.lanes
        if name not in lanes:
            known = ", ".join(sorted(lanes)) or "none yet"
            raise NotFound(f"no lane named {name!r} (known lanes: {known}; add one with zen lane add)")
        return lanes[name]

    def agent_settings(self, agent: str) -> dict[str, Any]:
        agents = self.data.get("agents") or {}
        return dict(agents.get(agent) or {})

    def dump(self) -> str:
        buf = io.StringIO()
        _yaml().dump(self.data, buf)
        return buf.getvalue()


def edit_config(home: Home, change: Any) -> Config:
    """Apply `change(config)` to zen.yaml under a lock and publish it atomically, comments kept."""
    with flocked(home.config_lock):
        cfg = Config._parse(home)  # the file itself, comments and all (never the cache)
        change(cfg)
        text = cfg.dump()
        atomic_write(home.config_path, text)
        _keep(home, text, cfg.data)
    return cfg


def lane_path(spec: dict[str, Any]) -> Path:
    return Path(str(spec.get("path", ""))).expanduser()
