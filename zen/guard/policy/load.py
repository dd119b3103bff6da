"""The guardian's policy: YAML that humans edit, compiled into a JSON cache the hook reads.

Sources (all optional; a missing file adds nothing):
  <home>/policy/guardian.yaml   switches, integrations, extra hosts/paths/commands, extra rules
  <home>/policy/autonomy.yaml   level per domain (read by levels.py)
  <home>/incidents/*.yaml       `controls.guardian_rules`: rules derived from past incidents

The YAML is parsed (ruamel, imported only here and only when a source changed) and validated,
then the normalised result is written to <home>/logs/.guard-cache.json, keyed by the path,
mtime, ctime, size and inode of every source. The hook loads that JSON (stdlib only). A source
that fails to parse or validate is cached too, as `invalid`: every decision is then a deny
naming the file, until someone fixes it. Lists in the file extend the built-in floor in
defaults.py; nothing in the file can remove a built-in.
The compiled JSON becomes the effective policy the guardian judges by in effective.py.

Guardian rule schema (policy `rules:` and an incident's `controls.guardian_rules:` share it):

  - id: no-prod-db                 # unique; letters, digits, . _ : -
    reason: one line shown to the agent and in the timeline
    decision: deny                 # deny (default) | approval (a human must `zen approve` it)
    match:                         # every key given must hold; a list means any of its items
      command: [psql, pgcli]       # program name (after unwrapping sudo/env/bash -c/...), glob
      subcommand: ["db:drop"]      # leading words after the program, e.g. "push" or "config set"
      args: ["*prod*"]             # any argument matches a glob
      flags: [--force, -f]         # any of these options is present (bundled -xf counts)
      path: ["migrations/**"]      # a path argument or file-tool target; /abs, ~/home or
                                   # worktree-relative (no slash = a file name at any depth)
      text: ["DROP\\s+SCHEMA"]     # a regex (case-insensitive) over the command line or the
                                   # text a file tool writes
      tool: [Write, Edit]          # file tools (Edit, Write, MultiEdit, NotebookEdit) only
      host: ["*.internal.example"] # a host an HTTP client in the command reaches
    domains: [data]                # optional: only for jobs of these domains
    levels: [suggest]              # optional: only at these autonomy levels
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from zen.errors import PolicyError
from zen.guard.policy import defaults
from zen.guard.policy.effective import APPROVAL_SWITCHES as APPROVAL_SWITCHES  # noqa: PLC0414
from zen.guard.policy.effective import Policy as Policy  # noqa: PLC0414 (load_policy's)
from zen.store import layout

FORMAT = 3          # bump when the compiled JSON changes shape
CACHE_NAME = layout.GUARD_CACHE
LEVELS = ("observe", "suggest", "act-and-report", "autonomous")
HTTP_METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
DEFAULT_AUTONOMY: dict[str, Any] = {"default_level": "suggest", "domains": {}}

_GUARDIAN_KEYS = {"zen", "require_approval", "integrations", "high_consequence_hosts",
                  "hosted_api_hosts", "package_registries", "vendor_clis", "credential_paths", "credential_commands", "protected_paths",
                  "system_commands", "network_commands", "rules", "limits"}
_RULE_KEYS = {"id", "reason", "decision", "match", "domains", "levels"}
_MATCH_KEYS = {"command", "subcommand", "args", "flags", "path", "text", "tool", "host"}
_INTEGRATION_KEYS = {"base_url", "methods", "credential", "auth", "hosts", "category",
                     "description"}
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")


# ---------------------------------------------------------------------------------------------
# sources and the cache

def _stat_key(path: str) -> list[Any]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [path, None, None, None, None]
    return [path, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]


def source_paths(home: str) -> list[str]:
    paths = [os.path.join(home, layout.POLICY, layout.GUARDIAN_POLICY),
             os.path.join(home, layout.POLICY, layout.AUTONOMY_POLICY)]
    inc = os.path.join(home, layout.INCIDENTS)
    try:
        names = sorted(n for n in os.listdir(inc) if n.endswith((".yaml", ".yml")) and not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        names = []
    paths.extend(os.path.join(inc, n) for n in names)
    return paths


def load_compiled(home: str | None, sources: list[list[Any]] | None = None) -> dict[str, Any]:
    """The compiled policy of `home` (from the cache when every source is unchanged)."""
    if home is None:
        return {"v": FORMAT, "sources": [], "invalid": None, "policy": {}, "autonomy": DEFAULT_AUTONOMY}
    if sources is None:
        sources = [_stat_key(p) for p in source_paths(home)]
    cache = os.path.join(home, layout.LOGS, CACHE_NAME)
    try:
        with open(cache, "rb") as f:
            data = json.loads(f.read())
        if isinstance(data, dict) and data.get("v") == FORMAT and data.get("sources") == sources:
            return data
    except (OSError, ValueError):
        pass
    data = compile_sources(home, sources)
    _write_cache(cache, data)
    return data


def _write_cache(path: str, data: dict[str, Any]) -> None:
    directory = os.path.dirname(path)
    tmp = os.path.join(directory, f".guard-cache.{os.getpid()}.tmp")
    try:
        os.makedirs(directory, exist_ok=True)
        with open(tmp, "w") as f:
            f.write(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def compile_sources(home: str, sources: list[list[Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"v": FORMAT, "sources": sources, "invalid": None, "policy": {},
                           "autonomy": DEFAULT_AUTONOMY}
    try:
        guardian_path, autonomy_path, *incident_paths = (s[0] for s in sources)
        policy = _compile_guardian(_read_yaml(home, guardian_path), _rel(home, guardian_path))
        autonomy = _compile_autonomy(_read_yaml(home, autonomy_path), _rel(home, autonomy_path))
        seen = {r["id"]: r["source"] for r in policy["rules"]}
        for p in incident_paths:
            for rule in _compile_incident(_read_yaml(home, p), _rel(home, p), p):
                if rule["id"] in seen:
                    raise PolicyError(f"{rule['source']}: rule id {rule['id']!r} is also used in {seen[rule['id']]}")
                seen[rule["id"]] = rule["source"]
                policy["rules"].append(rule)
        out["policy"] = policy
        out["autonomy"] = autonomy
    except PolicyError as exc:
        out["invalid"] = str(exc)
    except Exception as exc:  # a bug in the compiler must still deny, not allow
        out["invalid"] = f"the policy could not be compiled ({type(exc).__name__}: {exc})"
    return out


def _rel(home: str, path: str) -> str:
    return os.path.relpath(path, home) if path.startswith(home.rstrip("/") + "/") else path


def _read_yaml(home: str, path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{_rel(home, path)}: cannot be read ({exc})") from None
    # only when a source changed (the hook reads the compiled JSON): ruamel stays off its path
    from ruamel.yaml import YAML

    try:
        return YAML(typ="safe", pure=True).load(text)
    except Exception as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"{_rel(home, path)}: not valid YAML ({problem}{where})") from None


# ---------------------------------------------------------------------------------------------
# validation

def _strs(value: Any, where: str, *, allow_empty: bool = True) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise PolicyError(f"{where}: expected a list of strings")
    if not value and not allow_empty:
        raise PolicyError(f"{where}: must not be empty")
    return [v.strip() for v in value]


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise PolicyError(f"{where}: expected a mapping")
    return value


def _unknown(d: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(str(k) for k in d if k not in allowed)
    if extra:
        raise PolicyError(f"{where}: unknown key {extra[0]!r} (known: {', '.join(sorted(allowed))})")


def _version(d: dict[str, Any], where: str) -> None:
    if d.get("zen", 1) != 1:
        raise PolicyError(f"{where}: format version {d.get('zen')!r} is not supported (this zen reads 1)")


def _compile_guardian(data: Any, where: str) -> dict[str, Any]:
    d = _mapping(data, where)
    _unknown(d, _GUARDIAN_KEYS, where)
    _version(d, where)
    ra = _mapping(d.get("require_approval"), f"{where}: require_approval")
    _unknown(ra, set(APPROVAL_SWITCHES), f"{where}: require_approval")
    switches = {}
    for k in APPROVAL_SWITCHES:
        v = ra.get(k, False)
        if not isinstance(v, bool):
            raise PolicyError(f"{where}: require_approval.{k} must be true or false")
        switches[k] = v
    hosts = _host_categories(d, "high_consequence_hosts", "high-consequence", where)
    integrations = {}
    for name, spec in _mapping(d.get("integrations"), f"{where}: integrations").items():
        integrations[str(name)] = _compile_integration(str(name), spec, f"{where}: integrations.{name}")
    creds = []
    for i, item in enumerate(_strs(d.get("credential_commands"), f"{where}: credential_commands")):
        words = item.split()
        flags = [w for w in words if w.startswith("-") and words.index(w) > 0]
        prefix = " ".join(w for w in words if w not in flags)
        if not prefix:
            raise PolicyError(f"{where}: credential_commands[{i}] names no program")
        creds.append([prefix, flags])
    raw_rules = d.get("rules") or []
    if not isinstance(raw_rules, list):
        raise PolicyError(f"{where}: rules must be a list")
    rules = [_compile_rule(r, f"{where}: rules[{i}]", where) for i, r in enumerate(raw_rules)]
    limits = _mapping(d.get("limits"), f"{where}: limits")   # enforced by zen/observe/limits.py
    _unknown(limits, set(defaults.LIMIT_KEYS), f"{where}: limits")
    for k, v in limits.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise PolicyError(f"{where}: limits.{k} must be a whole number of at least 0 (0: no limit)")
    return {
        "require_approval": switches,
        "hosts": hosts,
        "hosted_hosts": _host_categories(d, "hosted_api_hosts", "hosted API", where),
        "package_registries": [h.lower() for h in _strs(d.get("package_registries"), f"{where}: package_registries")],
        "integrations": integrations,
        "vendor_clis": _strs(d.get("vendor_clis"), f"{where}: vendor_clis"),
        "credential_paths": _strs(d.get("credential_paths"), f"{where}: credential_paths"),
        "credential_commands": creds,
        "protected_paths": _strs(d.get("protected_paths"), f"{where}: protected_paths"),
        "system_commands": _strs(d.get("system_commands"), f"{where}: system_commands"),
        "network_commands": _strs(d.get("network_commands"), f"{where}: network_commands"),
        "rules": rules,
        "limits": {str(k): v for k, v in limits.items() if v},
    }


def _host_categories(d: dict[str, Any], key: str, default: str, where: str) -> list[list[str]]:
    """[host, category] pairs of a hosts key: a mapping of category to hosts, or one list."""
    value = d.get(key)
    if isinstance(value, dict):
        return [[h.lower(), str(cat)] for cat, items in value.items()
                for h in _strs(items, f"{where}: {key}.{cat}")]
    return [[h.lower(), default] for h in _strs(value, f"{where}: {key}")]


def split_url(url: str) -> tuple[str, str, int | None, str] | None:
    """(scheme, host, port, path) of an http(s) URL, or None."""
    m = re.match(r"^(https?)://([^/?#@]+@)?(\[[^\]]+\]|[^:/?#]+)(?::(\d+))?([/?#].*)?$", url, re.I)
    if not m:
        return None
    return m.group(1).lower(), m.group(3).lower(), int(m.group(4)) if m.group(4) else None, m.group(5) or ""


def _compile_integration(name: str, spec: Any, where: str) -> dict[str, Any]:
    s = _mapping(spec, where)
    _unknown(s, _INTEGRATION_KEYS, where)
    if not _ID_RE.match(name):
        raise PolicyError(f"{where}: name must be letters, digits, . _ : -")
    base = s.get("base_url")
    parts = split_url(base) if isinstance(base, str) else None
    if parts is None or not isinstance(base, str):
        raise PolicyError(f"{where}: base_url must be an http(s) URL like https://api.example.com")
    scheme, host, port, prefix = parts
    methods = [m.upper() for m in _strs(s.get("methods"), f"{where}: methods", allow_empty=False)]
    bad = [m for m in methods if m not in HTTP_METHODS]
    if bad:
        raise PolicyError(f"{where}: methods: {bad[0]!r} is not one of {', '.join(HTTP_METHODS)}")
    cred = _mapping(s.get("credential"), f"{where}: credential")
    _unknown(cred, {"env", "file"}, f"{where}: credential")
    if len(cred) != 1 or not all(isinstance(v, str) and v for v in cred.values()):
        raise PolicyError(f"{where}: credential must be {{env: VAR}} or {{file: PATH}}")
    auth = s.get("auth", "bearer")
    if not isinstance(auth, str) or not (auth in ("bearer", "basic", "none") or
                                         re.match(r"^(header|query):[A-Za-z0-9_-]+$", auth)):
        raise PolicyError(f"{where}: auth must be bearer, basic, none, header:NAME or query:NAME")
    hostport = host if port is None else f"{host}:{port}"
    hosts = [h.lower() for h in _strs(s.get("hosts"), f"{where}: hosts")] or [hostport]
    return {"base_url": base.rstrip("/"), "scheme": scheme, "host": host, "port": port,
            "prefix": prefix.rstrip("/"), "methods": methods, "credential": dict(cred),
            "auth": auth, "hosts": hosts, "category": str(s.get("category") or "integration")}


def _compile_rule(spec: Any, where: str, source: str, incident: str | None = None) -> dict[str, Any]:
    r = _mapping(spec, where)
    _unknown(r, _RULE_KEYS, where)
    rid = r.get("id")
    if not isinstance(rid, str) or not _ID_RE.match(rid):
        raise PolicyError(f"{where}: id is required (letters, digits, . _ : -)")
    reason = r.get("reason")
    if not isinstance(reason, str) or not reason.strip() or "\n" in reason.strip():
        raise PolicyError(f"{where}: reason is required and must be one line")
    decision = r.get("decision", "deny")
    if decision not in ("deny", "approval"):
        raise PolicyError(f"{where}: decision must be deny or approval")
    m = _mapping(r.get("match"), f"{where}: match")
    _unknown(m, _MATCH_KEYS, f"{where}: match")
    if not m:
        raise PolicyError(f"{where}: match must name at least one condition")
    match = {k: _strs(m.get(k), f"{where}: match.{k}", allow_empty=False) for k in _MATCH_KEYS if k in m}
    for pat in match.get("text", []):
        try:
            re.compile(pat)
        except re.error as exc:
            raise PolicyError(f"{where}: match.text {pat!r} is not a valid regex ({exc})") from None
    levels = _strs(r.get("levels"), f"{where}: levels") or None
    if levels and any(lv not in LEVELS for lv in levels):
        raise PolicyError(f"{where}: levels must be among {', '.join(LEVELS)}")
    return {"id": rid, "reason": reason.strip(), "decision": decision, "match": match,
            "domains": _strs(r.get("domains"), f"{where}: domains") or None, "levels": levels,
            "source": source, "incident": incident}


def _compile_incident(data: Any, where: str, path: str) -> list[dict[str, Any]]:
    d = _mapping(data, where)
    _version(d, where)
    incident_id = d.get("id") or os.path.splitext(os.path.basename(path))[0]
    controls = _mapping(d.get("controls"), f"{where}: controls")
    rules = controls.get("guardian_rules") or []
    if not isinstance(rules, list):
        raise PolicyError(f"{where}: controls.guardian_rules must be a list of rules")
    return [_compile_rule(r, f"{where}: controls.guardian_rules[{i}]", where, str(incident_id))
            for i, r in enumerate(rules)]


def _compile_autonomy(data: Any, where: str) -> dict[str, Any]:
    d = _mapping(data, where)
    _version(d, where)
    default = d.get("default_level", "suggest")
    if default not in LEVELS:
        raise PolicyError(f"{where}: default_level must be one of {', '.join(LEVELS)}")
    domains = {}
    for name, level in _mapping(d.get("domains"), f"{where}: domains").items():
        if level not in LEVELS:
            raise PolicyError(f"{where}: domains.{name} must be one of {', '.join(LEVELS)}")
        domains[str(name)] = level
    return {"default_level": default, "domains": domains}


# ---------------------------------------------------------------------------------------------
# the effective policy of a home (effective.py: what it holds)

_LOADED: dict[str, tuple[list[list[Any]], Policy, dict[str, Any]]] = {}


def load_policy(home: str | None) -> tuple[Policy, dict[str, Any]]:
    """(effective policy, autonomy settings) of a home, or the floor when there is none. A process
    that decides many times (the resident guardian, a batch) builds it again only when a source
    changed; the sources are looked at on every call."""
    if home is None:
        data = load_compiled(None)
        return Policy(data), data.get("autonomy") or DEFAULT_AUTONOMY
    sources = [_stat_key(p) for p in source_paths(home)]
    hit = _LOADED.get(home)
    if hit is not None and hit[0] == sources:
        return hit[1], hit[2]
    data = load_compiled(home, sources)
    loaded = Policy(data), data.get("autonomy") or DEFAULT_AUTONOMY
    _LOADED[home] = (sources, *loaded)
    return loaded


# ---------------------------------------------------------------------------------------------
# checks for other commands (preflight, `zen incidents check`)

def validate_rules(rules: list[dict[str, Any]], source: str) -> list[str]:
    """Errors of guardian rules in the policy schema (empty when they all compile)."""
    if not isinstance(rules, list):
        return [f"{source}: guardian rules must be a list"]
    errors: list[str] = []
    seen: set[str] = set()
    for i, r in enumerate(rules):
        try:
            rule = _compile_rule(r, f"{source}: rule[{i}]", source)
        except PolicyError as exc:
            errors.append(str(exc))
            continue
        if rule["id"] in seen:
            errors.append(f"{source}: rule[{i}]: id {rule['id']!r} is used twice")
        seen.add(rule["id"])
    return errors


def load_policy_errors(home_root: Any) -> list[str]:
    """Errors of every policy source of a home (guardian.yaml, autonomy.yaml, incidents' rules)."""
    home = str(home_root)
    errors: list[str] = []
    guardian_path, autonomy_path, *incident_paths = source_paths(home)
    seen: dict[str, str] = {}
    try:
        policy = _compile_guardian(_read_yaml(home, guardian_path), _rel(home, guardian_path))
        seen.update({r["id"]: r["source"] for r in policy["rules"]})
    except PolicyError as exc:
        errors.append(str(exc))
    try:
        _compile_autonomy(_read_yaml(home, autonomy_path), _rel(home, autonomy_path))
    except PolicyError as exc:
        errors.append(str(exc))
    for p in incident_paths:
        try:
            for rule in _compile_incident(_read_yaml(home, p), _rel(home, p), p):
                if rule["id"] in seen:
                    errors.append(f"{rule['source']}: rule id {rule['id']!r} is also used in {seen[rule['id']]}")
                seen[rule["id"]] = rule["source"]
        except PolicyError as exc:
            errors.append(str(exc))
        except Exception as exc:
            errors.append(f"{_rel(home, p)}: {type(exc).__name__}: {exc}")
    return errors


def integrations(home_root: Any) -> list[dict[str, Any]]:
    """The integration gates of a home's policy: name, base_url, methods, hosts, credential_env
    (the environment variable holding its credential, or None) and credential_file."""
    home = str(home_root)
    path = os.path.join(home, layout.POLICY, layout.GUARDIAN_POLICY)
    policy = _compile_guardian(_read_yaml(home, path), _rel(home, path))
    out = []
    for name, spec in policy["integrations"].items():
        cred = spec.get("credential") or {}
        out.append({"name": name, "base_url": spec["base_url"], "methods": list(spec["methods"]),
                    "hosts": list(spec["hosts"]), "auth": spec["auth"], "category": spec["category"],
                    "credential_env": cred.get("env"), "credential_file": cred.get("file")})
    return out
