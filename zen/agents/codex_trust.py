"""Codex's folder trust, kept in $CODEX_HOME/config.toml as `[projects."<repo>"] trust_level`.

Trust of a repository's main checkout covers its linked worktrees (reference/real-codex.md), so
trusting a lane once lets every job's Codex start without its "Trust this folder?" screen. zen
writes this file only when the user asks (`zen lane trust NAME`): it adds (or fixes) that one
table, leaves every other line as it was, checks that the result parses to the same settings
plus the trust, and writes it atomically. A file it cannot edit that way is refused, not rewritten.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from zen.errors import ZenError
from zen.store.atomic import atomic_write, flocked

TRUSTED = "trusted"
_HEADER = re.compile(r"""^\s*\[\s*projects\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(?:#.*)?$""")
_TABLE = re.compile(r"^\s*\[")
_TRUST_LINE = re.compile(r"^\s*trust_level\s*=")


def codex_home(home_dir: Path | None = None) -> Path:
    if home_dir is None and os.environ.get("CODEX_HOME"):
        return Path(os.environ["CODEX_HOME"]).expanduser()
    return (home_dir or Path(os.path.expanduser("~"))) / ".codex"


def config_toml(home_dir: Path | None = None) -> Path:
    return codex_home(home_dir) / "config.toml"


def _key(repo: Path) -> str:
    return str(Path(repo).expanduser().resolve())


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ZenError(f"{path} is not valid TOML ({exc}); fix it and retry") from None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _entry(data: dict[str, Any], key: str) -> Any:
    projects = data.get("projects")
    return projects.get(key) if isinstance(projects, dict) else None


def is_trusted(repo: Path, home_dir: Path | None = None) -> bool:
    path = config_toml(home_dir)
    try:
        entry = _entry(_parse(_read(path), path), _key(repo))
    except ZenError:
        return False
    return isinstance(entry, dict) and entry.get("trust_level") == TRUSTED


def _header_key(quoted: str) -> str | None:
    try:
        value = tomllib.loads(f"k = {quoted}")["k"]
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, str) else None


def edited(text: str, key: str) -> str | None:
    """`text` with `[projects."<key>"] trust_level = "trusted"`, or None when the project's entry
    is written in a form this cannot edit line by line (an inline table, dotted keys)."""
    lines = text.splitlines(keepends=True)
    line = f"trust_level = {json.dumps(TRUSTED)}\n"
    for i, raw in enumerate(lines):
        m = _HEADER.match(raw)
        if not m or _header_key(m.group(1)) != key:
            continue
        j = i + 1
        while j < len(lines) and not _TABLE.match(lines[j]):
            if _TRUST_LINE.match(lines[j]):
                lines[j] = line
                return "".join(lines)
            j += 1
        lines.insert(i + 1, line)
        return "".join(lines)
    if _entry_present(text, key):
        return None
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}[projects.{json.dumps(key)}]\n{line}"


def _entry_present(text: str, key: str) -> bool:
    try:
        return _entry(tomllib.loads(text), key) is not None
    except tomllib.TOMLDecodeError:
        return False


def trust(repo: Path, home_dir: Path | None = None) -> bool:
    """Record that Codex may trust `repo`. Returns False when it already was trusted."""
    path = config_toml(home_dir)
    key = _key(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    with flocked(path.parent / ".config.toml.zen-lock"):
        text = _read(path)
        before = _parse(text, path)
        entry = _entry(before, key)
        if isinstance(entry, dict) and entry.get("trust_level") == TRUSTED:
            return False
        if "projects" in before and not isinstance(before["projects"], dict):
            raise ZenError(f"{path} has a 'projects' key that is not a table; zen will not edit it")
        new = edited(text, key)
        if new is None:
            raise ZenError(f"{path} defines projects.{json.dumps(key)} in a form zen does not edit; "
                           f"add trust_level = \"trusted\" to it yourself")
        after = _parse(new, path)
        expected = dict(before)
        projects = dict(expected.get("projects") or {})
        projects[key] = {**(entry if isinstance(entry, dict) else {}), "trust_level": TRUSTED}
        expected["projects"] = projects
        if after != expected:
            raise ZenError(f"zen could not add the trust of {key} to {path} without changing other "
                           "settings; add it yourself")
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        atomic_write(path, new, mode=mode)
    return True
