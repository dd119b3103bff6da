"""`zen guard check --batch FILE.jsonl`: one JSON decision per input line, in order, one process.

A throughput tool (auditing a history of commands, testing a policy change against a corpus),
so zen/__main__.py routes it here before the CLI framework loads, like the hook; `zen guard check
--batch` inside the CLI calls the same `run`. Lean: stdlib + zen.guard only.

Lines are judged in blocks of BLOCK; a block of at least PARALLEL_MIN lines is shared between
this process and forked copies of it (one per further CPU, up to WORKERS), each judging a
contiguous part and handing its answers back through a pipe, so the answers come out in input
order. A copy that fails or answers short is not trusted: this process judges its part again.
Before it forks, this process judges the block's first line and imports every rule family, so
the copies inherit the parser, the policy and the rules instead of loading each for itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

from zen.errors import HomeError
from zen.guard import rules
from zen.guard.context import Guard, calls_from_record, discover_home

BLOCK = 8192
_ALLOWED = '{"decision": "allow"'          # how judge() starts an allow (Decision.as_dict order)
PARALLEL_MIN = 512
WORKERS = 4
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode    # json.dumps(d, ensure_ascii=False), built once


def judge(guard: Guard, n: int, line: str, here: str) -> str:
    """The answer to line number `n`, as one JSON line (no newline)."""
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
    return _ENCODE(d)


def _blocks(stream: TextIO) -> Iterator[list[str]]:
    block: list[str] = []
    for line in stream:
        block.append(line)
        if len(block) >= BLOCK:
            yield block
            block = []
    if block:
        yield block


def _workers() -> int:
    if threading.active_count() > 1 or not hasattr(os, "fork"):
        return 1     # forking a process with threads could copy a lock held by one of them
    return max(1, min(WORKERS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


def _fork(guard: Guard, first: int, lines: list[str], here: str) -> tuple[int, int] | None:
    """(pid, read end) of a copy judging `lines` (numbered from `first`), or None."""
    try:
        r, w = os.pipe()
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:   # the copy: judge, hand the answers over, leave without running any cleanup
        code = 0
        try:
            os.close(r)
            out = "\n".join(judge(guard, first + i, line, here) for i, line in enumerate(lines))
            data = f"{len(lines)}\n{out}\n".encode("utf-8", "surrogateescape")
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
        except BaseException:
            code = 1
        os._exit(code)
    os.close(w)
    return pid, r


def _collect(pid: int, r: int, count: int) -> list[str] | None:
    """The copy's answers, or None when it failed or gave fewer than `count`."""
    chunks = []
    try:
        while chunk := os.read(r, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(r)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        return None
    head, _, body = b"".join(chunks).decode("utf-8", "surrogateescape").partition("\n")
    answers = body.split("\n")[:-1]
    return answers if head == str(count) and len(answers) == count else None


def _judge_block(guard: Guard, first: int, block: list[str], here: str, workers: int) -> list[str]:
    if workers < 2 or len(block) < PARALLEL_MIN:
        return [judge(guard, first + i, line, here) for i, line in enumerate(block)]
    size = -(-len(block) // workers)
    parts = [(first + i, block[i:i + size]) for i in range(0, len(block), size)]
    # what every copy needs (the parser, the policy, the rule families) loaded once, here, before
    # they fork: by judging the first line, and importing every family
    out = [judge(guard, first, block[0], here)]
    with contextlib.suppress(Exception):   # a family that fails to load denies its lines, as alone
        rules.load_all()
    sys.stdout.flush()
    copies = [_fork(guard, start, lines, here) for start, lines in parts[1:]]
    out.extend(judge(guard, parts[0][0] + i, line, here) for i, line in enumerate(parts[0][1]) if i)
    for (start, lines), copy in zip(parts[1:], copies, strict=True):
        got = _collect(*copy, len(lines)) if copy is not None else None
        out.extend(got if got is not None else
                   [judge(guard, start + i, line, here) for i, line in enumerate(lines)])
    return out


def run(source: str, default_cwd: str | None, home: str | None, out: TextIO | None = None) -> int:
    """Judge every line of `source` (- = stdin). Exit 0 when all are allowed, else 4.

    A bad line gives a deny line, never a crash. Raises OSError when `source` cannot be read.
    """
    out = out or sys.stdout
    guard = Guard(home=home, cache=True)
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
    here = default_cwd or os.getcwd()
    workers = _workers()
    all_allowed = True
    n = 1
    with stream:
        for block in _blocks(stream):
            answers = _judge_block(guard, n, block, here, workers)
            n += len(block)
            if all_allowed and not all(a.startswith(_ALLOWED) for a in answers):
                all_allowed = False
            out.write("\n".join(answers) + "\n")
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
