"""API calls in a Gemini CLI chat log (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, the
`transcript_path` of its hooks), as zen/observe/record.py reads every agent's session file.

Each API response is a message line `{"id", "type": "gemini", "tokens": {"input", "output",
"cached", "thoughts", "tool", "total"}, "model"}`; a message written again (same id) counts once,
with its last figures, and the `{"$set": {"messages": [...]}}` lines that rewrite the log's head
are read the same way. Google counts the cached tokens inside `input` and bills the thoughts as
output, so they map to zen's classes as fresh input = input - cached (+ tool-use prompt), cache
reads = cached, output = output + thoughts. Stdlib only: the Stop hook runs this.

    chat = GeminiChat()
    chat.feed(lines)                 # any number of times, as the file grows
    for model, tokens in chat.calls(): ...
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from zen.observe.tokens import Tokens, count


def chat_tokens(tokens: Mapping[str, Any]) -> Tokens:
    inp, cached = count(tokens.get("input")), count(tokens.get("cached"))
    return Tokens(input=max(0, inp - cached) + count(tokens.get("tool")),
                  output=count(tokens.get("output")) + count(tokens.get("thoughts")),
                  cache_read=min(cached, inp) if inp else cached)


class GeminiChat:
    kind = "gemini"
    error_count = 0

    def __init__(self) -> None:
        self.messages: dict[str, tuple[str, Tokens]] = {}

    def feed(self, lines: Iterable[bytes | str]) -> int:
        seen = 0
        for raw in lines:
            if (b'"tokens"' not in raw) if isinstance(raw, bytes) else ('"tokens"' not in raw):
                continue
            try:
                line = json.loads(raw)
            except (ValueError, TypeError):
                continue         # a torn last line: the next reading sees it whole
            if not isinstance(line, dict):
                continue
            patch = line.get("$set")
            if isinstance(patch, dict) and isinstance(patch.get("messages"), list):
                seen += sum(self._take(m) for m in patch["messages"])
            seen += self._take(line)
        return seen

    def _take(self, msg: Any) -> int:
        if not isinstance(msg, dict) or msg.get("type") != "gemini" or not isinstance(msg.get("tokens"), dict):
            return 0
        key = str(msg.get("id") or f"#{len(self.messages)}")
        self.messages[key] = (str(msg.get("model") or ""), chat_tokens(msg["tokens"]))
        return 1

    def calls(self) -> Iterator[tuple[str, Tokens]]:
        yield from self.messages.values()

    def to_json(self) -> dict[str, Any]:
        return {"messages": {k: [m, t.tolist()] for k, (m, t) in self.messages.items()}}

    @classmethod
    def from_json(cls, data: Any) -> GeminiChat:
        out = cls()
        if isinstance(data, dict):
            for k, rec in (data.get("messages") or {}).items():
                if isinstance(rec, list) and len(rec) == 2:
                    out.messages[str(k)] = (str(rec[0]), Tokens.fromlist(rec[1]))
        return out
