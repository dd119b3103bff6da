"""A scripted stand-in for the OpenAI Responses API on 127.0.0.1, for the real Codex CLI.

Codex (a custom model provider with `base_url = <url>/v1`, `wire_api = "responses"`) asks
`GET /v1/models` once, then `POST /v1/responses` with `stream: true` for each step of a turn. A
shell step is answered with a `function_call` of `exec_command` (Codex runs it as bash -lc in its
cwd and sends the output back as a `function_call_output`); a text step with an assistant message,
which ends the turn. The step is chosen by counting `function_call_output` items and assistant
messages in the request's `input` (reference/real-codex.md).

The TUI titles each new session with a side request (no tools, a `codex_output_schema` JSON
schema): it gets `{"title": ...}` and never moves the script.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from tests.agents.scripted import Reply, Request, ScriptedServer, Step, fill, say, shell

__all__ = ["CodexAPI", "say", "shell"]

_ids = itertools.count(1)
_CWD = re.compile(r"<cwd>([^<]+)</cwd>")


def is_title_request(body: dict[str, Any]) -> bool:
    fmt = ((body.get("text") or {}).get("format") or {}) if isinstance(body.get("text"), dict) else {}
    if fmt.get("name") == "codex_output_schema" and not body.get("tools"):
        return True
    return "Generate a concise, single-line task title" in json.dumps(body.get("input"))[:20000]


def position(body: dict[str, Any]) -> int:
    """How many script steps the conversation in `body` has been through."""
    done = 0
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "function_call_output" or (kind == "message" and item.get("role") == "assistant"):
            done += 1
    return done


def working_dir(body: dict[str, Any]) -> str:
    found = _CWD.search(json.dumps(body.get("input")))
    return found.group(1) if found else ""


def outputs(body: dict[str, Any]) -> dict[str, str]:
    """call_id -> the function_call_output text Codex sent back in this request."""
    out: dict[str, str] = {}
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            value = item.get("output")
            out[str(item.get("call_id"))] = value if isinstance(value, str) else json.dumps(value)
    return out


def user_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            for c in item.get("content") or []:
                if isinstance(c, dict) and c.get("type") == "input_text":
                    texts.append(str(c.get("text")))
    return texts


def _usage(step: Step) -> dict[str, Any]:
    u = step.usage
    total = u["input_tokens"] + u["output_tokens"]
    return {"input_tokens": u["input_tokens"], "input_tokens_details": {"cached_tokens": u["cached_tokens"]},
            "output_tokens": u["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": u["reasoning_tokens"]}, "total_tokens": total}


class CodexAPI(ScriptedServer):
    def call_id(self, step: int) -> str:
        return f"call_zen{step:04d}"

    def output_for(self, step: int) -> str | None:
        """What Codex sent back for the shell call of script step `step` (latest request first)."""
        for r in reversed(self.script_requests()):
            found = outputs(r.body).get(self.call_id(step))
            if found is not None:
                return found
        return None

    def respond(self, req: Request) -> Reply:
        path = req.path.split("?", 1)[0]
        if req.method == "GET" and path.endswith("/models"):
            req.kind = "models"
            return Reply(json_body={"object": "list", "data": [], "models": []})
        if req.method != "POST" or not path.endswith("/responses") or not isinstance(req.body, dict):
            req.kind = "other"
            return Reply(404, {"error": {"message": "not scripted", "type": "not_found"}})
        body = req.body
        if is_title_request(body):
            req.kind = "title"
            return Reply(events=self._events(say('{"title":"Scripted task"}', usage={"input_tokens": 50,
                                                                                     "cached_tokens": 0,
                                                                                     "output_tokens": 5}),
                                             None, body))
        req.kind = "script"
        step_no, step = self.step_at(position(body))
        req.step = step_no
        return Reply(events=self._events(step, step_no, body))

    def _events(self, step: Step, step_no: int | None, body: dict[str, Any]) -> list[tuple[str | None, Any]]:
        resp_id = f"resp_zen{next(_ids):06d}"
        if step.kind == "shell":
            item: dict[str, Any] = {
                "type": "function_call", "id": f"fc_zen{next(_ids):06d}", "name": "exec_command",
                "call_id": self.call_id(step_no if step_no is not None else 9999),
                "arguments": json.dumps({"cmd": fill(step.command, working_dir(body)),
                                        **fill(step.args, working_dir(body))}),
            }
        else:
            item = {"type": "message", "role": "assistant", "id": f"msg_zen{next(_ids):06d}",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
        evs: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": {"id": resp_id}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                            "item": {**item, "content": []} if step.kind == "text" else item}),
        ]
        if step.kind == "text":
            evs.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                                       "content_index": 0, "item_id": item["id"],
                                                       "delta": step.text}))
        evs += [
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed",
                                    "response": {"id": resp_id, "usage": _usage(step)}}),
        ]
        return evs
