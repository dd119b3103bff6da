"""The effective policy the guardian judges by: the built-in floor plus what the sources add.

    Policy(compiled)     from load.py's compiled JSON: the approval switches, the integrations,
                         the high-consequence and hosted-API hosts, the package registries, the
                         credential paths and commands, the protected paths, the rules (and
                         which apply per domain and level)
    HostTable            host patterns (exact names, `*.` globs, ports) and what each stands for

Lean on purpose: imported by the hook (stdlib + zen.guard only).
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from zen.guard.policy import defaults
from zen.guard.policy.rule import Rule

APPROVAL_SWITCHES = ("file_deletes", "system_commands", "network_requests")
# first labels of a provider's hosts that serve people, not its API: a wildcard entry
# (*.twilio.com) does not reach them; an exact entry still does
DOC_LABELS = frozenset({"www", "docs", "doc", "developer", "developers", "dev", "help", "support", "status",
                        "blog", "community", "learn", "academy", "changelog", "stripe-docs"})


class Policy:
    """The effective policy: the built-in floor plus whatever the sources add."""

    def __init__(self, compiled: dict[str, Any] | None = None) -> None:
        compiled = compiled or {}
        self.invalid: str | None = compiled.get("invalid")
        p: dict[str, Any] = compiled.get("policy") or {}
        self.require_approval = {k: False for k in APPROVAL_SWITCHES}
        self.require_approval.update(p.get("require_approval") or {})
        self.integrations: dict[str, dict[str, Any]] = p.get("integrations") or {}
        host_entries: list[tuple[str, str, str | None]] = [
            (h, cat, None) for cat, hs in defaults.HIGH_CONSEQUENCE_HOSTS.items() for h in hs]
        host_entries.extend((h, c, None) for h, c in p.get("hosts") or [])
        for name, integ in self.integrations.items():
            host_entries.extend((h, integ.get("category", "integration"), name) for h in integ["hosts"])
        self._hosts = HostTable(host_entries)
        self._hosted = HostTable([(h, cat, None) for cat, hs in defaults.HOSTED_API_HOSTS.items() for h in hs] +
                                 [(h, c, None) for h, c in p.get("hosted_hosts") or []])
        self._registries = HostTable([(h, "registry", None) for h in
                                      (*defaults.PACKAGE_REGISTRIES, *(p.get("package_registries") or ()))],
                                     doc_labels=False)
        self.vendor_clis = frozenset(defaults.VENDOR_CLIS) | frozenset(p.get("vendor_clis") or ())
        self.credential_paths = tuple(defaults.CREDENTIAL_PATHS) + tuple(p.get("credential_paths") or ())
        self.protected_paths = tuple(p.get("protected_paths") or ())
        self.system_commands = frozenset(defaults.SYSTEM_COMMANDS) | frozenset(p.get("system_commands") or ())
        self.network_commands = frozenset(defaults.NETWORK_COMMANDS) | frozenset(p.get("network_commands") or ())
        creds = [(prefix, tuple(flags)) for prefix, flags in defaults.CREDENTIAL_COMMANDS]
        creds.extend((prefix, tuple(flags)) for prefix, flags in p.get("credential_commands") or ())
        self.credential_commands: dict[str, list[tuple[list[str], tuple[str, ...]]]] = {}
        for prefix, flags in creds:
            words = prefix.split()
            self.credential_commands.setdefault(words[0], []).append((words[1:], flags))
        self.rules = [Rule.from_dict(r) for r in p.get("rules") or ()]
        self._applicable: dict[tuple[str | None, str], list[Rule]] = {}

    def rules_for(self, domain: str | None, level: str) -> list[Rule]:
        """The rules that apply in `domain` at `level` (worked out once per pair; never changed)."""
        hit = self._applicable.get((domain, level))
        if hit is None:
            hit = self._applicable[(domain, level)] = [r for r in self.rules if r.applies(domain, level)]
        return hit

    def match_host(self, host: str, port: int | None, scheme: str | None = None
                   ) -> tuple[str, str, str | None] | None:
        """(pattern, category, integration) when `host` is one raw calls may not reach."""
        return self._hosts.match(host, port, scheme)

    def match_hosted(self, host: str, port: int | None, scheme: str | None = None
                     ) -> tuple[str, str, str | None] | None:
        """(pattern, category, None) when `host` is a hosted API a mutating call changes."""
        return self._hosted.match(host, port, scheme)

    def known_registry(self, host: str, port: int | None, scheme: str | None = None) -> bool:
        """`host` is a package index or registry installs may use."""
        return self._registries.match(host, port, scheme) is not None


class HostTable:
    """Host patterns (exact names, `*.` globs, optionally with a port) and what each stands for."""

    def __init__(self, entries: list[tuple[str, str, str | None]], doc_labels: bool = True) -> None:
        self._exact: dict[str, tuple[str, str, str | None]] = {}
        self._wild: list[tuple[str, str, str | None]] = []
        self._doc_labels = doc_labels
        for pattern, cat, integ in entries:
            pattern = pattern.lower().rstrip(".")
            if any(ch in pattern for ch in "*?["):
                self._wild.append((pattern, cat, integ))
            elif pattern not in self._exact or integ is not None:   # an integration names its gate
                self._exact[pattern] = (pattern, cat, integ)
        self._wild.sort(key=lambda e: e[2] is None)

    def match(self, host: str, port: int | None, scheme: str | None = None) -> tuple[str, str, str | None] | None:
        host = host.lower().rstrip(".")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if port is None:
            port = {"https": 443, "http": 80}.get(scheme or "")
        candidates = [host] if port is None else [f"{host}:{port}", host]
        for c in candidates:
            hit = self._exact.get(c)
            if hit is not None:
                return hit
        if self._doc_labels and host.split(".", 1)[0] in DOC_LABELS:
            return None     # a provider's documentation or portal (www.twilio.com), not its API
        for c in candidates:
            for pattern, cat, integ in self._wild:
                if fnmatchcase(c, pattern):
                    return pattern, cat, integ
        return None
