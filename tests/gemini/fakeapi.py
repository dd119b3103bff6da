"""A scripted stand-in for the Gemini API (generativelanguage v1beta) on 127.0.0.1, for the real
Gemini CLI pointed at it by GOOGLE_GEMINI_BASE_URL with an API key.

Turns are `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (answered as server-sent
events, each a GenerateContentResponse). A shell step is a `functionCall` of `run_shell_command`;
Gemini CLI runs it and sends the result back as a `functionResponse` part in the next request. A
text step answers with text and ends the turn. The step is chosen by counting functionResponse
parts and text-only model turns in `contents`.

Side requests ask for JSON (`responseMimeType: application/json`): the model router (which model
should answer) gets `{"model_choice": "flash"}`, the next-speaker check `{"next_speaker": "user"}`,
anything else an object filled from its schema. They never move the script.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.agents.scripted import Reply, Request, ScriptedServer, Step, fill, say, shell, tool

__all__ = ["GeminiAPI", "say", "shell", "tool"]

_MODEL = re.compile(r"/models/([^/:?]+):(\w+)")
_CWD = re.compile(r"Workspace Directories:\*\*\\n\s*- (/[^\s\"'`\\]+)")


def _config(body: dict[str, Any]) -> dict[str, Any]:
    cfg = body.get("generationConfig") or body.get("config") or {}
    return cfg if isinstance(cfg, dict) else {}


def wants_json(body: dict[str, Any]) -> bool:
    return str(_config(body).get("responseMimeType") or "").startswith("application/json")


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    cfg = _config(body)
    found = cfg.get("responseJsonSchema") or cfg.get("responseSchema") or {}
    return found if isinstance(found, dict) else {}


def _value(schema: dict[str, Any]) -> Any:
    kind = str(schema.get("type") or "string").lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        return {k: _value(v) for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict)}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    return "scripted"


def json_answer(body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(kind, the JSON object) for a side request that asks for JSON."""
    props = _schema(body).get("properties") or {}
    if "model_choice" in props or "complexity_score" in props:
        if "complexity_score" in props:
            return "router", {"complexity_reasoning": "a scripted test", "complexity_score": 10}
        return "router", {"reasoning": "a scripted test", "model_choice": "flash"}
    if "next_speaker" in props:
        return "next_speaker", {"reasoning": "the turn is over", "next_speaker": "user"}
    return "json", _value({"type": "object", "properties": props})


def position(body: dict[str, Any]) -> int:
    done = 0
    for content in body.get("contents") or []:
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "user":
            done += sum(1 for p in parts if "functionResponse" in p)
        elif content.get("role") == "model" and parts and not any("functionCall" in p for p in parts) \
                and any(p.get("text") for p in parts if not p.get("thought")):
            done += 1
    return done


def working_dir(body: dict[str, Any]) -> str:
    found = _CWD.search(json.dumps(body.get("contents"))[:200000]) or \
        _CWD.search(json.dumps(body.get("systemInstruction"))[:200000])
    return found.group(1).rstrip(".,;:") if found else ""


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for content in body.get("contents") or []:
        for p in content.get("parts") or []:
            if isinstance(p, dict) and "functionResponse" in p:
                out.append(p["functionResponse"])
    return out


def user_texts(body: dict[str, Any]) -> list[str]:
    return [str(p.get("text")) for c in body.get("contents") or [] if c.get("role") == "user"
            for p in c.get("parts") or [] if isinstance(p, dict) and p.get("text")]


def _usage(step: Step) -> dict[str, Any]:
    u = step.usage
    return {"promptTokenCount": u["input_tokens"], "cachedContentTokenCount": u["cached_tokens"],
            "candidatesTokenCount": u["output_tokens"], "thoughtsTokenCount": u["reasoning_tokens"],
            "totalTokenCount": u["input_tokens"] + u["output_tokens"] + u["reasoning_tokens"]}


class GeminiAPI(ScriptedServer):
    model_version = "gemini-2.5-flash"

    def output_for(self, step: int) -> str | None:
        """What Gemini CLI sent back for the shell call of script step `step`."""
        for r in reversed(self.script_requests()):
            responses = function_responses(r.body)
            if len(responses) > step:
                return json.dumps(responses[step].get("response"))
        return None

    def respond(self, req: Request) -> Reply:
        path = req.path.split("?", 1)[0]
        m = _MODEL.search(path)
        if req.method != "POST" or m is None or not isinstance(req.body, dict):
            req.kind = "other"
            if req.method == "GET" and path.rstrip("/").endswith("/models"):
                req.kind = "models"
                return Reply(json_body={"models": []})
            return Reply(404, {"error": {"code": 404, "message": "not scripted", "status": "NOT_FOUND"}})
        method, body = m.group(2), req.body
        if method == "countTokens":
            req.kind = "count"
            return Reply(json_body={"totalTokens": 100})
        if method == "embedContent":
            req.kind = "embed"
            return Reply(json_body={"embedding": {"values": [0.0] * 8}})
        if wants_json(body):
            req.kind, obj = json_answer(body)
            resp = self._response(say(json.dumps(obj), usage={"input_tokens": 40, "cached_tokens": 0,
                                                              "output_tokens": 8}), None, body)
            if method == "generateContent":
                return Reply(json_body=resp)
            return Reply(events=[(None, resp)])
        req.kind = "script"
        step_no, step = self.step_at(position(body))
        req.step = step_no
        resp = self._response(step, step_no, body)
        if method == "generateContent":
            return Reply(json_body=resp)
        return Reply(events=[(None, resp)])

    def _response(self, step: Step, step_no: int | None, body: dict[str, Any]) -> dict[str, Any]:
        if step.kind == "shell":
            args = {"command": fill(step.command, working_dir(body)), "description": "scripted command",
                    **fill(step.args, working_dir(body))}
            parts: list[dict[str, Any]] = [{"functionCall": {"name": "run_shell_command", "args": args}}]
        elif step.kind == "tool":
            parts = [{"functionCall": {"name": step.command, "args": fill(step.args, working_dir(body))}}]
        else:
            parts = [{"text": step.text}]
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                "index": 0}],
                "usageMetadata": _usage(step), "modelVersion": self.model_version,
                "responseId": f"resp-{step_no}"}
