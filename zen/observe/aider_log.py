"""API calls in aider's analytics log (`--analytics-log FILE`, JSON lines), as
zen/observe/record.py reads every agent's session file.

Each answer aider gets is a `message_send` event whose properties carry its token report's
figures exactly (`prompt_tokens`, `completion_tokens`; the printed report rounds them to "3.0k")
and its cost estimate; the model is `main_model`. Other events (launched, command_*, exit) carry
no usage. Stdlib only: the notification hook runs this.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from zen.observe.tokens import Tokens, count


class AiderLog:
    kind = "aider"
    error_count = 0

    def __init__(self) -> None:
        self.sent: list[tuple[str, Tokens]] = []

    def feed(self, lines: Iterable[bytes | str]) -> int:
        seen = 0
        for raw in lines:
            if (b"message_send" not in raw) if isinstance(raw, bytes) else ("message_send" not in raw):
                continue
            try:
                line = json.loads(raw)
            except (ValueError, TypeError):
                continue          # a torn last line: the next reading sees it whole
            props = line.get("properties") if isinstance(line, dict) and line.get("event") == "message_send" else None
            if not isinstance(props, dict):
                continue
            model = str(props.get("main_model") or "")
            self.sent.append((model, Tokens(input=count(props.get("prompt_tokens")),
                                            output=count(props.get("completion_tokens")))))
            seen += 1
        return seen

    def calls(self) -> Iterator[tuple[str, Tokens]]:
        yield from self.sent

    def to_json(self) -> dict[str, Any]:
        return {"sent": [[m, t.tolist()] for m, t in self.sent]}

    @classmethod
    def from_json(cls, data: Any) -> AiderLog:
        out = cls()
        if isinstance(data, dict):
            for rec in data.get("sent") or ():
                if isinstance(rec, list) and len(rec) == 2:
                    out.sent.append((str(rec[0]), Tokens.fromlist(rec[1])))
        return out
