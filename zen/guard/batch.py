"""`zen guard check --batch FILE.jsonl`: one JSON decision per input line, in order, one process.

A throughput tool (auditing a history of commands, testing a policy change against a corpus),
so zen/__main__.py routes it here before the CLI framework loads, like the hook; `zen guard check
--batch` inside the CLI calls the same `run`. Lean: stdlib + zen.guard only.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from zen.guard.context import Guard, HomeError, calls_from_record, discover_home


def run(source: str, default_cwd: str | None, home: str | None, out: TextIO | None = None) -> int:
    """Judge every line of `source` (- = stdin). Exit 0 when all are allowed, else 4.

    A bad line gives a deny line, never a crash. Raises OSError when `source` cannot be read.
    """
    out = out or sys.stdout
    guard = Guard(home=home, cache=True)
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
    here = default_cwd or os.getcwd()
    lines: list[str] = []
    all_allowed = True
    dumps = json.dumps
    with stream:
        for n, line in enumerate(stream, 1):
            try:
                if not line.strip():
                    raise ValueError("the line is empty")
                calls, cwd, worktree = calls_from_record(json.loads(line), here)
            except ValueError as exc:
                reason = (f"line {n} is not JSON ({exc})" if isinstance(exc, json.JSONDecodeError)
                          else f"line {n}: {exc}")
                d = {"decision": "deny", "rule": "guard.input", "reason": reason}
            else:
                d = guard.safe_check(calls[0] if len(calls) == 1 else calls, cwd, worktree).as_dict()
            if d["decision"] != "allow":
                all_allowed = False
            lines.append(dumps(d, ensure_ascii=False))
            if len(lines) >= 1024:
                out.write("\n".join(lines) + "\n")
                lines.clear()
    if lines:
        out.write("\n".join(lines) + "\n")
    out.flush()
    return 0 if all_allowed else 4


def fast_main(argv: list[str]) -> int | None:
    """`guard check --batch FILE [--cwd DIR]` without the CLI framework; None = not this form
    (anything else, --help included, goes through the full CLI, which gives the same answers)."""
    args = list(argv)
    opts: dict[str, str] = {}
    while args:
        a = args.pop(0)
        key, eq, val = a.partition("=")
        if key not in ("--batch", "--cwd"):
            return None
        if not eq:
            if not args:
                return None
            val = args.pop(0)
        opts[key] = val
    if "--batch" not in opts:
        return None
    try:
        home = discover_home(opts.get("--cwd") or os.getcwd(), None, os.environ)
    except HomeError as exc:
        sys.stderr.write(f"zen: {exc} (run zen init DIR)\n")
        return 1
    try:
        return run(opts["--batch"], opts.get("--cwd"), home)
    except OSError as exc:
        sys.stderr.write(f"zen: cannot read {opts['--batch']} ({exc.strerror})\n")
        return 1
