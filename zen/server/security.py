"""The gate in front of every route (an ASGI middleware, so it covers the SSE streams too):
Host, Origin, the token or the session cookie, and the login exchange. See zen.server.auth."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool

from zen.server import auth
from zen.server.context import ServerContext

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
LOGIN_PATH = "/agent"
LOGOUT_PATH = "/agent/logout"
# the page's own assets and scripts only; styles may be set by the page's script
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
           (b"content-security-policy", CSP.encode())]

LOGGED_OUT = """<!doctype html><meta charset="utf-8"><title>zen: log in</title>
<body style="font:15px system-ui;margin:3em;max-width:40em">
<h1>zen dashboard</h1><p>{message}</p>
<p>Run <code>zen serve --url</code> in a terminal and open the link it prints: it logs this browser
in once (the link then stops working, and the page keeps you logged in with a cookie).</p></body>
"""


async def _reply(send: Send, status: int, body: bytes, ctype: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", ctype), (b"content-length", str(len(body)).encode()), *HEADERS, *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def problem(send: Send, status: int, sentence: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await _reply(send, status, json.dumps({"error": sentence}).encode(), b"application/json", extra)


class Gate:
    def __init__(self, app: ASGIApp, context: ServerContext) -> None:
        self.app = app
        self.ctx = context

    def hosts(self) -> frozenset[str]:
        # once: over TLS on every address the names come from the resolver
        got: frozenset[str] | None = getattr(self, "_hosts", None)
        if got is None:
            got = self._hosts = auth.allowed_hosts(self.ctx.host, self.ctx.port, tls=self.ctx.tls)
        return got

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets: nothing else is served
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        hosts = self.hosts()
        if headers.get("host", "") not in hosts:
            await problem(send, 403, "this server answers only to its own address (Host header refused)")
            return
        origin = headers.get("origin")
        scheme = "https://" if self.ctx.tls else "http://"
        if origin is not None and (not origin.startswith(scheme) or origin.removeprefix(scheme) not in hosts):
            await problem(send, 403, "cross-origin requests are refused")
            return
        method = scope.get("method", "GET")
        path = scope.get("path", "")
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        token = self.ctx.token
        if path == "/" and method == "GET":
            # the address a person types: the dashboard (which says itself when not logged in)
            await _reply(send, 303, b"", b"text/plain", [(b"location", LOGIN_PATH.encode())])
            return
        if path == LOGIN_PATH and method == "GET" and "token" in query:
            await self._login(send, token, query, headers.get("cookie"))
            return
        by_bearer = auth.bearer_ok(headers.get("authorization"), token)
        # a stat of control/logins.json and a lookup: cheap enough for the event loop
        by_cookie = not by_bearer and self.ctx.logins.valid(token, headers.get("cookie"))
        if not (by_bearer or by_cookie):
            await self._refuse(send, path, "no valid token (send Authorization: Bearer <control/api-token>)")
            return
        if by_cookie and method not in SAFE_METHODS:
            # a cookie travels with any request the browser makes: a write must come from the page
            site = headers.get("sec-fetch-site")
            if origin is None and site not in ("same-origin", None):
                await problem(send, 403, "cross-site requests are refused")
                return
            if origin is None and site is None:
                await problem(send, 403, "a write with the session cookie must come from the dashboard page")
                return
        if path == LOGOUT_PATH and method == "POST":
            await self._logout(send, token, headers.get("cookie") if by_cookie else None)
            return
        await self.app(scope, receive, self._with_headers(send))

    def _with_headers(self, send: Send) -> Send:
        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []), *(h for h in HEADERS if h[0] not in names)]
            await send(message)
        return wrapped

    async def _login(self, send: Send, token: str, query: dict[str, str], cookie_header: str | None) -> None:
        session_id = await run_in_threadpool(self.ctx.logins.redeem, token, query["token"])
        if session_id is None and self.ctx.logins.valid(token, cookie_header):
            # a used link opened again in a browser that is logged in already: just the dashboard
            await _reply(send, 303, b"", b"text/plain", [(b"location", LOGIN_PATH.encode())])
            return
        if session_id is None:
            body = LOGGED_OUT.format(message="This login link was already used, has expired, or is not one "
                                     "of this server's.").encode()
            await _reply(send, 401, body, b"text/html; charset=utf-8")
            return
        rest = {k: v for k, v in query.items() if k != "token"}
        location = LOGIN_PATH + (f"?{urlencode(rest)}" if rest else "")
        cookie = (f"{auth.COOKIE}={session_id}; HttpOnly; SameSite=Strict; Path=/; "
                  f"Max-Age={int(self.ctx.logins.ttl_s)}" + ("; Secure" if self.ctx.tls else ""))
        await _reply(send, 303, b"", b"text/plain", [(b"location", location.encode()),
                                                     (b"set-cookie", cookie.encode())])

    async def _logout(self, send: Send, token: str, cookie_header: str | None) -> None:
        """POST /agent/logout: this browser's session ends (the server forgets it), its cookie too."""
        ended = cookie_header is not None and await run_in_threadpool(self.ctx.logins.logout, token, cookie_header)
        gone = f"{auth.COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
        await _reply(send, 200, json.dumps({"logged_out": bool(ended)}).encode(), b"application/json",
                     [(b"set-cookie", gone.encode())])

    async def _refuse(self, send: Send, path: str, sentence: str) -> None:
        if path == LOGIN_PATH or path.startswith(LOGIN_PATH + "/"):
            body = LOGGED_OUT.format(message="This browser is not logged in.").encode()
            await _reply(send, 401, body, b"text/html; charset=utf-8")
            return
        await problem(send, 401, sentence, [(b"www-authenticate", b"Bearer")])
