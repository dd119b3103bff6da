"""A scripted stand-in for an OpenAI-compatible chat-completions server on 127.0.0.1, for the
real aider (`--openai-api-base <url>/v1`, a model named `openai/...`).

Aider has no tools: every answer is text. A text step is a reply (with aider's edit blocks in it,
if it should edit files); a shell step is a reply suggesting that command in a ```bash block,
which aider offers to run only when its shell commands are on. The step is the number of
assistant messages already in the conversation. Answers stream as chat.completion.chunk events
ending with a usage chunk and [DONE].
"""

from __future__ import annotations

import itertools
from typing import Any

from tests.agents.scripted import Reply, Request, ScriptedServer, Step, say, shell

__all__ = ["AiderAPI", "new_file", "say", "shell"]

_ids = itertools.count(1)


def new_file(path: str, content: str, words: str = "Here it is.") -> Step:
    """A reply whose SEARCH/REPLACE block creates `path` (aider's diff edit format)."""
    return say(f"{words}\n\n{path}\n```\n<<<<<<< SEARCH\n=======\n{content.rstrip()}\n>>>>>>> REPLACE\n```\n")


def reply_text(step: Step) -> str:
    if step.kind == "shell":
        return f"Run this:\n\n```bash\n{step.command}\n```\n"
    return step.text


def _content(m: dict[str, Any]) -> str:
    c = m.get("content")
    return c if isinstance(c, str) else " ".join(str(p.get("text", "")) for p in c or [] if isinstance(p, dict))


def position(body: dict[str, Any], script: list[Step]) -> int:
    """How many script replies the conversation holds, in order (aider's prompt also carries
    example exchanges of its own, which are not the script's)."""
    done = 0
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "assistant" and done < len(script) \
                and _content(m).strip() == reply_text(script[done]).strip():
            done += 1
    return done


def user_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == "user":
            out.append(_content(m))
    return out


class AiderAPI(ScriptedServer):
    def respond(self, req: Request) -> Reply:
        path = req.path.split("?", 1)[0]
        if req.method == "GET" and path.endswith("/models"):
            req.kind = "models"
            return Reply(json_body={"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]})
        if req.method != "POST" or not path.endswith("/chat/completions") or not isinstance(req.body, dict):
            req.kind = "other"
            return Reply(404, {"error": {"message": "not scripted", "type": "not_found"}})
        body = req.body
        req.kind = "script"
        step_no, step = self.step_at(position(body, self.script))
        req.step = step_no
        text, model, u = reply_text(step), str(body.get("model") or "gpt-4o"), step.usage
        rid, created = f"chatcmpl-zen{next(_ids):06d}", 1796000000
        usage = {"prompt_tokens": u["input_tokens"], "completion_tokens": u["output_tokens"],
                 "total_tokens": u["input_tokens"] + u["output_tokens"]}

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        if not body.get("stream"):
            return Reply(json_body={"id": rid, "object": "chat.completion", "created": created, "model": model,
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": text}}],
                                    "usage": usage})
        return Reply(events=[(None, chunk({"role": "assistant", "content": ""})), (None, chunk({"content": text})),
                             (None, chunk({}, "stop")),
                             (None, {"id": rid, "object": "chat.completion.chunk", "created": created,
                                     "model": model, "choices": [], "usage": usage}),
                             (None, "[DONE]")])
