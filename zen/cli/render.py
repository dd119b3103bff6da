"""The one renderer: a command hands it a result and the result's text form; it prints that text,
or the result as one JSON document with --json.

Text forms are generators of `str` (a line on stdout), `Note` (a line on stderr: banners, hints)
and `Table`. Tables are laid out here in plain text (columns padded, two spaces apart, a bold
header at a terminal): rich took 0.2 s to lay out a table of 1,000 jobs and 20 ms to import,
more than the rest of `zen status` together. Text that agents or files supplied is data: control
characters are shown escaped, so a task or an event can never drive the user's terminal.
"""

from __future__ import annotations

import json
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from zen.core.durations import format_duration

R = TypeVar("R")


class Note:
    """A line for stderr: a banner or a hint, never part of the data. (Plain classes here, not
    dataclasses: `dataclasses` imports `inspect`, a tenth of what `zen status` may take.)"""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Note({self.text!r})"


class Table:
    __slots__ = ("columns", "rows")

    def __init__(self, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        self.columns = columns
        self.rows = rows

    def __repr__(self) -> str:
        return f"Table({self.columns!r}, {len(self.rows)} rows)"


Out = str | Note | Table
TextForm = Callable[[R], Iterable[Out]]

# C0 and C1 controls and DEL, except tab and newline (which multi-line prompts keep)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: object) -> str:
    """`text` with control characters made visible (\\x1b for ESC): agent text is data."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def jsonable(obj: Any) -> Any:
    """A result as plain JSON data: `to_json()` or `as_dict()` when it has one, pydantic models
    by their JSON dump, dataclasses field by field, enums by value, paths as strings."""
    if hasattr(obj, "to_json"):
        return jsonable(obj.to_json())
    if hasattr(obj, "as_dict"):
        return jsonable(obj.as_dict())
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    fields = getattr(obj, "__dataclass_fields__", None)   # a dataclass instance (not importing dataclasses)
    if fields is not None and not isinstance(obj, type):
        return {name: jsonable(getattr(obj, name)) for name in fields}
    if isinstance(obj, Enum):
        return obj.value
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(x) for x in obj]
    return obj


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(jsonable(data), indent=2, default=str, ensure_ascii=False) + "\n")


def emit(result: R, json_out: bool, text: TextForm[R]) -> None:
    """Print `result`: its text form, or with `json_out` one JSON document on stdout."""
    if json_out:
        emit_json(result)
        return
    for item in text(result):
        if isinstance(item, Table):
            write_lines(table_lines(item, bold=_bold_ok()))
        elif isinstance(item, Note):
            sys.stderr.write(item.text + "\n")
        else:
            sys.stdout.write(item + "\n")


def say(text: str) -> None:
    """A one-line result with nothing to show as data (`lane removed`)."""
    sys.stdout.write(text + "\n")


def note(text: str) -> None:
    sys.stderr.write(text + "\n")


def write_lines(lines: Iterable[str]) -> None:
    sys.stdout.write("".join(line + "\n" for line in lines))


def _bold_ok() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def width(text: str) -> int:
    """Terminal cells `text` takes: wide East Asian characters take two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in text)


def _cell(value: object) -> str:
    text = str(value)
    if text.isascii() and text.isprintable():  # the usual cell: nothing to clean (a C-speed check)
        return text
    return clean(text).replace("\n", " ").replace("\t", " ")


def table_lines(t: Table, *, bold: bool = False) -> Iterator[str]:
    """Columns left-aligned, each as wide as its widest cell, two spaces apart; cells are cleaned
    and a line break inside a cell is shown as a space."""
    cells = [[_cell(c) for c in row] for row in t.rows]
    header = [clean(c) for c in t.columns]
    widths = [max([width(header[i]), *(width(r[i]) for r in cells if i < len(r))]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        parts = [c + " " * (widths[i] - width(c)) for i, c in enumerate(row)]
        return "  ".join(parts)

    head = line(header)
    yield f"\x1b[1m{head}\x1b[0m" if bold else head
    for row in cells:
        yield line(row)


# -- figures (zen metrics, and the headline zen show and zen status carry) ----------------------

def count(n: float) -> str:
    """1234 -> 1,234; 1234567 -> 1.23M (token counts are read at a glance)."""
    n = float(n)
    if abs(n) >= 10_000_000:
        return f"{n / 1e6:.1f}M"
    if abs(n) >= 1_000_000:
        return f"{n / 1e6:.2f}M"
    return f"{int(n):,}"


def ms(value: float | None) -> str:
    """A latency: 340 ms, 1.5 s, 2m."""
    if value is None:
        return "-"
    if value < 1000:
        return f"{value:.0f} ms"
    return f"{value / 1000:.1f} s" if value < 60_000 else format_duration(value / 1000.0)


def headline(f: Mapping[str, Any]) -> str:
    """One line: tokens, cost, calls, errors (zen show and zen status use it too)."""
    tokens = f["tokens"] if "tokens" in f else sum(
        int(f.get(k) or 0) for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                     "cache_creation_input_tokens"))
    return (f"{count(tokens)} tokens, ${f.get('cost_usd', 0):.6f}, {count(f.get('api_calls', 0))} API calls, "
            f"{f.get('api_errors', 0)} errors")
