"""The FastAPI application of `zen serve` (DESIGN section 11), in FastAPI's "bigger applications"
layout: a router per resource (api_*.py), the home and the live feed as dependencies
(context.py), one error funnel (errors.py), and the gate in front of it all (security.py).

There is no CORS middleware on purpose, and no docs pages (they would load scripts from a CDN):
the schema is at /api/v1/openapi.json.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from zen import __version__
from zen.server import (
    api_agent_sessions,
    api_coord,
    api_files,
    api_guardrails,
    api_live,
    api_review,
    api_sessions,
    api_stream,
    api_tasks,
    api_term,
    api_ui,
    errors,
)
from zen.server.context import ServerContext
from zen.server.hub import Hub
from zen.server.security import Gate
from zen.store.home import Home

OPENAPI = "/api/v1/openapi.json"


def create_app(home: Home, *, host: str = "127.0.0.1", port: int = 19840, keepalive_s: float = 15.0,
               tls: bool = False) -> Gate:
    """The ASGI application for `home`: FastAPI behind the gate. `zen serve` runs it."""
    context = ServerContext(home=home, host=host, port=port, hub=Hub(home), keepalive_s=keepalive_s, tls=tls)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await context.hub.start()
        try:
            yield
        finally:
            context.hub.close()

    app = FastAPI(title="zen", version=__version__, openapi_url=OPENAPI, docs_url=None, redoc_url=None,
                  lifespan=lifespan,
                  description="The HTTP API of a zen home: the same files and the same code as the zen CLI. "
                              "Authenticate with `Authorization: Bearer <control/api-token>`.")
    app.state.zen = context
    errors.install(app)
    for module in (api_tasks, api_sessions, api_agent_sessions, api_guardrails, api_coord, api_files, api_live,
                   api_review, api_stream, api_term, api_ui):
        app.include_router(module.router)
    app.include_router(api_ui.page)
    app.mount("/agent/static", StaticFiles(directory=api_ui.STATIC), name="static")
    return Gate(app, context)  # gate.app is the FastAPI app, gate.ctx its context


__all__ = ["OPENAPI", "create_app"]
