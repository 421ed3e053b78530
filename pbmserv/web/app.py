"""The read-only web site: a Starlette app over the store, its pages laid
out by Jinja2 templates (autoescaped: every userid and text of a game is
escaped), with the headers that keep a page from running or loading
anything but its own picture and style sheet."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import quote

from anyio import to_thread
from jinja2 import Environment, PackageLoader
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbmserv.config import Settings
from pbmserv.service.intake.arrival import Clock, utc_now
from pbmserv.service.processing.catalog import Catalog
from pbmserv.service.processing.context import as_utc
from pbmserv.store.database import make_engine
from pbmserv.store.handles import Engine
from pbmserv.web import routes
from pbmserv.web.boards import NotFound, shown_time
from pbmserv.web.caching import Bodies

#: no script, no frame, no form, nothing from elsewhere: the site's own pictures and style sheet only
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src 'self' data:; style-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
#: the threads that run the handlers (Starlette's pool, 40 by default), each with a
#: connection of its own: the work is mostly Python's, which more threads only queue up for
HANDLER_THREADS = 8


@dataclass(frozen=True)
class Site:
    """What every handler reads through: the settings, a read-only engine, the games, the clock, the templates,
    the bodies made (`caching.Bodies`)."""

    settings: Settings
    engine: Engine
    catalog: Catalog
    clock: Clock
    templates: Environment
    bodies: Bodies

    def page(self, request: Request, template: str, **values: object) -> str:
        return self.templates.get_template(template).render(request=request, games=self.catalog.names(), **values)

    def base_url(self, request: Request) -> str:
        """The site's address as players reach it: `[web] base_url`, else the one the request came to."""
        return (self.settings.web_base_url or str(request.base_url)).rstrip("/")


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every answer, errors and the style sheet included."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def templates() -> Environment:
    """The pages' templates, all compiled now (and never looked at again on the disk: `auto_reload`)."""
    environment = Environment(
        loader=PackageLoader("pbmserv.web", "templates"), autoescape=True, trim_blocks=True, lstrip_blocks=True, auto_reload=False,
    )
    environment.filters["when"] = shown_time
    environment.filters["path"] = lambda part: quote(str(part), safe="")
    environment.filters["rfc3339"] = lambda moment: as_utc(moment).isoformat(timespec="seconds")
    for name in environment.list_templates():
        environment.get_template(name)
    return environment


def make_app(settings: Settings, catalog: Catalog | None = None, clock: Clock = utc_now) -> Starlette:
    """The site for `settings`' database, reading it through an engine that cannot write."""
    engine = make_engine(settings.database_url, settings.database_busy_seconds, read_only=True, connections=HANDLER_THREADS)
    site = Site(settings, engine, catalog or Catalog.installed(settings.extra_games), clock, templates(), Bodies())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        to_thread.current_default_thread_limiter().total_tokens = HANDLER_THREADS
        yield
        engine.dispose()

    def not_found(request: Request, error: Exception) -> Response:
        message = str(error) if isinstance(error, NotFound) else (
            "There is no page at this address. The first page lists the games, the boards in play and the latest results."
        )
        if isinstance(error, HTTPException) and error.status_code != 404:
            return Response(error.detail, status_code=error.status_code, media_type="text/plain")
        return Response(site.page(request, "not_found.html", message=message), status_code=404, media_type="text/html")

    app = Starlette(
        routes=[
            Mount("/static", StaticFiles(packages=[("pbmserv.web", "static")]), name="static"),
            *routes.routes(site),
        ],
        exception_handlers={NotFound: not_found, HTTPException: not_found},
        lifespan=lifespan,
    )
    app.add_middleware(SecurityHeaders)
    return app
