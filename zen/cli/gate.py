"""zen gate: call a listed integration through its gate."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from zen.cli import common, render
from zen.errors import ZenError
from zen.guard import gate


@dataclass(frozen=True)
class Answer:
    integration: str
    method: str
    path: str
    status: int
    body: Any
    text: str
    ok: bool

    def to_json(self) -> dict[str, Any]:
        return {"integration": self.integration, "method": self.method, "path": self.path,
                "status": self.status, "body": self.body}


def _answered(a: Answer) -> Iterator[render.Out]:
    # the body is the integration's answer, printed as it came (a script may pipe it on)
    if a.text:
        yield a.text.removesuffix("\n")
    if not a.ok:
        yield render.Note(f"zen gate: {a.integration} answered {a.status}")


def _body(data: str | None) -> bytes | None:
    if data is None:
        return None
    if not data.startswith("@"):
        return data.encode()
    try:
        return Path(data[1:]).expanduser().read_bytes()
    except OSError as exc:
        raise ZenError(f"cannot read {data[1:]} ({exc.strerror})") from None


def _parsed(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return text


def gate_cmd(
    name: str = typer.Argument(..., help="The integration (policy/guardian.yaml integrations)."),
    method: str = typer.Argument(..., help="GET, POST, ..."),
    path: str = typer.Argument(..., help="The path under the integration's base URL, e.g. /v1/items."),
    data: str = typer.Option(None, "--data", "-d", help="The request body: JSON text, or @FILE."),
    json_out: bool = typer.Option(False, "--json", help="Print {integration, method, path, status, body}."),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds to wait for the answer."),
) -> int:
    """Call a listed integration through its gate (the only sanctioned way); exit 0 on 2xx."""
    resp = gate.call(common.home_root_or_none(), name, method, path, _body(data), timeout=timeout)
    text = resp.body.decode("utf-8", "replace")
    answer = Answer(resp.integration, resp.method, resp.path, resp.status, _parsed(text), text, resp.ok)
    render.emit(answer, json_out, _answered)
    return 0 if resp.ok else 1


def register(app: typer.Typer) -> None:
    app.command("gate")(gate_cmd)
