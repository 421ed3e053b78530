"""Serving the site: the socket on `[web] listen`, made first (by `pbmserv
web`, or by `serve` before it starts its web process, which a restart
hands the same socket), and uvicorn answering on it."""

from __future__ import annotations

import logging
import socket

from pbmserv.config import Settings, cannot_listen

log = logging.getLogger(__name__)

#: connections waiting to be taken, as the SMTP listener's
LISTEN_BACKLOG = 1024


def site_address(settings: Settings) -> str:
    """Where the site answers, as a browser on this machine would write it."""
    return f"http://{settings.web_listen}/"


def listen(settings: Settings) -> socket.socket:
    """The listening socket of the site. An address in use is worth trying
    again (an earlier server may be stopping); one this machine cannot
    have is a setting to change."""
    host, _, port = settings.web_listen.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listening = socket.create_server((host, int(port)), family=family, backlog=LISTEN_BACKLOG)
    except OSError as error:
        raise cannot_listen(
            error, settings.web_listen, "[web] listen or PBMSERV_WEB_LISTEN",
            purpose=" for the web site", other=', or to "" for no web site',
        ) from error
    # the connections it accepts inherit this: asyncio sets it only on sockets made with
    # IPPROTO_TCP, and without it a head and body written apart wait for a delayed ACK (40 ms)
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listening


def run(settings: Settings, listening: socket.socket) -> None:
    """Answer on `listening` until SIGTERM or SIGINT, which let the requests under way finish."""
    import gc
    import signal

    import uvicorn

    from pbmserv.web.app import make_app

    if not logging.getLogger().isEnabledFor(logging.DEBUG):  # its start and stop lines, but for -v: pbmserv logs its own
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    # uvicorn stops on SIGTERM, then raises it again for the handler it found: this one, so that a stop ends with 0
    signal.signal(signal.SIGTERM, lambda *_: None)
    app = make_app(settings)
    # what the imports and the app made lives as long as the process: frozen, the
    # full collections no longer walk it (each held every request for 50-130 ms)
    gc.collect()
    gc.freeze()
    config = uvicorn.Config(
        app, http="httptools", loop="uvloop", log_config=None, access_log=False, server_header=False, lifespan="on",
    )
    uvicorn.Server(config).run(sockets=[listening])
