"""Every failure as `{"error": "<one sentence>"}` with the status code that says what kind it is.

zen's own error tree decides the code (zen/errors.py: each class carries its `http_status`): a thing
that is not there is 404, bad input 422, a request that conflicts with a job's state or a concurrent
change 409, the guardian's refusal 403, the kill switch 423. The class decides, never the message.
Only a bug is a 500, and it says where its traceback went.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from zen import errors as ze

log = logging.getLogger(__name__)


def one_sentence(text: str) -> str:
    text = " ".join(str(text).split())
    return text or "the request failed"


def problem(status: int, sentence: str) -> JSONResponse:
    return JSONResponse({"error": one_sentence(sentence)}, status_code=status)


def _validation_sentence(exc: RequestValidationError) -> tuple[int, str]:
    errs = exc.errors()
    if not errs:
        return 422, "the request is not valid"
    err = errs[0]
    if err.get("type") == "json_invalid":
        return 400, "the body is not valid JSON"
    loc = [str(p) for p in err.get("loc", ()) if p not in ("body",)]
    where = ".".join(loc)
    msg = str(err.get("msg", "is not valid")).removeprefix("Value error, ")
    if err.get("type") == "extra_forbidden":
        msg = "is not a field this endpoint takes"
    return 422, f"{where}: {msg}" if where else msg


def install(app: FastAPI) -> None:
    @app.exception_handler(ze.ZenError)
    async def _zen(request: Request, exc: ze.ZenError) -> JSONResponse:
        return problem(exc.http_status, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, sentence = _validation_sentence(exc)
        return problem(status, sentence)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else "the request failed"
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no such endpoint: {request.method} {request.url.path}"
        elif exc.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}"
        return problem(exc.status_code, detail)

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error in %s %s", request.method, request.url.path)
        return problem(500, "an unexpected error happened inside zen serve; the traceback is in logs/server.log")
