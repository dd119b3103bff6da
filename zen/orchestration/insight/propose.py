"""From an incident to guardian rules (issue 38): `zen incident propose ID` and `zen incident adopt ID`.

    propose(home, ref, jobs=(), seqs=()) -> Proposal    rules drafted from the incident's commands,
                                                         simulated over the fleet's history
    adopt(home, ref) -> Adopted                          the proposal written into the incident's
                                                         controls.guardian_rules (a policy source)

The incident's commands are what the guardian allowed in its jobs (named with --job, else the job
ids its text mentions): with --seq, those decisions; else the ones whose program (or the file an
edit wrote) the incident's text names. Each becomes one rule, as narrow as the command shows: the
program, its subcommand, the options it gave; an edit, the file's path. The proposal is simulated
over history: what it would have stopped in the incident's jobs, and what else it would block.
It is kept in incidents/.proposed-ID.json until a human adopts it (a dot file: not a source).
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from zen.core.incident import Incident
from zen.errors import ZenError
from zen.guard.api import FILE_TOOLS
from zen.guard.audit import rebuild_call
from zen.orchestration.insight.replay import Change, Recorded, load, recorded, simulate
from zen.orchestration.safety.incidents import get
from zen.store.atomic import atomic_write
from zen.store.home import Home
from zen.store.jobs import JobStore

JOB_ID = re.compile(r"\b\d{8}T\d{6}Z-[A-Za-z0-9][A-Za-z0-9._-]*")
WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "command", "exec", "nice", "timeout", "stdbuf"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "|&", "\n"})
_SUB = re.compile(r"^[a-z][a-z0-9:_-]*$")
_COUNT = re.compile(r"^\d+(\.\d+)?[smhd]?$")     # a wrapper's number: timeout 10, nice -n 5


@dataclass
class Proposal:
    incident: str
    jobs: list[str]
    rules: list[dict[str, Any]]
    stops: list[Change] = field(default_factory=list)      # in the incident's jobs
    also: list[Change] = field(default_factory=list)       # anywhere else
    saved: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"incident": self.incident, "jobs": self.jobs, "rules": self.rules, "saved": self.saved,
                "stops": [c.__dict__ for c in self.stops], "also": [c.__dict__ for c in self.also]}


@dataclass(frozen=True)
class Adopted:
    incident: str
    path: str
    rules: list[str]


def proposal_path(home: Home, incident_id: str) -> Path:
    return home.incidents / f".proposed-{incident_id}.json"


def _text(incident: Incident) -> str:
    parts = [incident.title, incident.what_happened, incident.root_cause, incident.impact, incident.prevention,
             *incident.mitigations]
    return "\n".join(parts)


def incident_jobs(home: Home, incident: Incident, named: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The jobs named (a prefix is enough when it is unique), else those the incident's text names."""
    ids = JobStore(home).ids()
    wanted = list(named) or JOB_ID.findall(_text(incident))
    out: list[str] = []
    for w in wanted:
        hits = [j for j in ids if j == w] or [j for j in ids if j.startswith(w)]
        if len(hits) != 1:
            if named:
                raise ZenError(f"--job {w}: {'no job' if not hits else 'more than one job'} by that id")
            continue
        if hits[0] not in out:
            out.append(hits[0])
    if not out:
        raise ZenError(f"incident {incident.id} names no job of this home: give its jobs with --job JOB")
    return out


def segments(command: str) -> list[list[str]]:
    """The simple commands of a command line, each as its words (wrappers and assignments gone,
    `bash -c 'X'` opened). A line shlex cannot read gives nothing."""
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        words = list(lex)
    except ValueError:
        return []
    out: list[list[str]] = []
    current: list[str] = []
    for w in [*words, ";"]:
        if w in SEPARATORS or set(w) <= set("&|;()<>"):
            if current:
                out.extend(_open(current))
            current = []
        else:
            current.append(w)
    return out


def _open(words: list[str]) -> list[list[str]]:
    i, wrapped = 0, False
    while i < len(words):
        w = words[i]
        if os.path.basename(w) in WRAPPERS:
            wrapped = True
        elif not (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w) or (wrapped and (w.startswith("-") or _COUNT.match(w)))):
            break
        i += 1
    words = words[i:]
    if not words:
        return []
    prog = os.path.basename(words[0])
    if prog in SHELLS and "-c" in words[1:]:
        k = words.index("-c")
        if k + 1 < len(words):
            return segments(words[k + 1])
    return [[prog, *words[1:]]]


def options(rest: list[str]) -> list[str]:
    """The options among a command's words: --long (without its =value), and each letter of a
    short cluster (-rf is -r and -f, as the rule's `flags` match them)."""
    out: set[str] = set()
    for w in rest:
        if w == "--":
            break
        if w.startswith("--") and len(w) > 2:
            out.add(w.split("=", 1)[0])
        elif w.startswith("-") and len(w) > 1:
            out.update(f"-{c}" for c in w[1:] if c.isalpha())
    return sorted(out)


def rule_for(words: list[str], text: str = "") -> dict[str, Any]:
    """The narrowest rule a command's words show: its program, subcommand and options. A rule's
    `flags` match when any of them is present, so only the options the incident's `text` names
    are kept when it names some."""
    prog, rest = words[0], words[1:]
    match: dict[str, Any] = {"command": [prog]}
    if rest and _SUB.match(rest[0]):
        match["subcommand"] = [rest[0]]
    flags = options(rest)
    named = [f for f in flags if re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", text)]
    if named or flags:
        match["flags"] = named or flags
    return match


def _rel(rec: Recorded, path: str) -> str:
    wt = rec.replay.get("worktree")
    if isinstance(wt, str) and path.startswith(wt.rstrip("/") + "/"):
        return path[len(wt.rstrip("/")) + 1:]
    return path


def draft(incident: Incident, records: list[Recorded], seqs: list[int] | tuple[int, ...] = ()) -> list[dict[str, Any]]:
    """One rule per distinct command (or edited file) of the incident."""
    text = _text(incident).lower()
    matches: list[dict[str, Any]] = []
    for rec in records:
        if rec.decision != "allow" or (seqs and rec.seq not in seqs):
            continue
        try:
            call = rebuild_call(rec.replay.get("call") or {})
        except (TypeError, ValueError, KeyError):
            continue
        if rec.tool in FILE_TOOLS and call.file_path:
            rel = _rel(rec, call.file_path)
            if seqs or os.path.basename(rel).lower() in text:
                matches.append({"tool": sorted(FILE_TOOLS), "path": [rel]})
            continue
        for words in segments(call.command or ""):
            if seqs or re.search(rf"(?<![\w-]){re.escape(words[0].lower())}(?![\w-])", text):
                matches.append(rule_for(words, text))
    rules: list[dict[str, Any]] = []
    for m in matches:
        if any(r["match"] == m for r in rules):
            continue
        rules.append({"id": f"{incident.id}-{len(rules) + 1}"[:80],
                      "reason": f"incident {incident.id}: {' '.join(incident.title.split())}"[:200],
                      "match": m})
    return rules


def propose(home: Home, ref: str, jobs: list[str] | tuple[str, ...] = (),
            seqs: list[int] | tuple[int, ...] = (), since: float | None = None) -> Proposal:
    _, incident = get(home, ref)
    job_ids = incident_jobs(home, incident, jobs)
    history = recorded(home, since)
    mine = [r for r in history if r.job in job_ids]
    rules = draft(incident, mine, seqs)
    if not rules:
        what = f"the decisions {', '.join(map(str, seqs))}" if seqs else "a command or file its text names"
        raise ZenError(f"incident {incident.id}: its jobs ({', '.join(job_ids)}) hold no allowed call among "
                       f"{what}: name the decisions with --seq SEQ (zen log JOB shows them)")
    sim = simulate(home, extra_rules=rules, records=history)
    proposal = Proposal(incident.id, job_ids, rules,
                        stops=[c for c in sim.changes if c.job in job_ids],
                        also=[c for c in sim.changes if c.job not in job_ids])
    path = proposal_path(home, incident.id)
    atomic_write(path, json.dumps({"incident": incident.id, "rules": rules}, indent=2) + "\n")
    proposal.saved = str(path)
    return proposal


def adopt(home: Home, ref: str) -> Adopted:
    """Write the proposal into the incident's record; the guardian loads it from its next call."""
    path, incident = get(home, ref)
    saved = proposal_path(home, incident.id)
    try:
        rules = json.loads(saved.read_text())["rules"]
    except FileNotFoundError:
        raise ZenError(f"incident {incident.id} has no proposal: run zen incident propose {incident.id} first") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ZenError(f"{saved} cannot be read ({exc}): run zen incident propose {incident.id} again") from None
    known = {r.get("id") for r in incident.controls.guardian_rules if isinstance(r, dict)}
    new = [r for r in rules if r.get("id") not in known]
    load(home, extra_rules=new)     # raises, naming the problem, when they do not compile with the rest
    y = YAML()
    y.width = 100
    data = y.load(path.read_text())
    controls = data.setdefault("controls", {})
    controls.setdefault("guardian_rules", [])
    controls["guardian_rules"].extend(new)
    buf = io.StringIO()
    y.dump(data, buf)
    atomic_write(path, buf.getvalue())
    saved.unlink(missing_ok=True)
    return Adopted(incident.id, str(path), [r["id"] for r in new])
