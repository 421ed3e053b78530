"""The SMTP listener: a thin aiosmtpd handler that stores each mail durably
(`Intake.accept`, in a thread off the event loop) before it answers 250,
and aiosmtpd's session with limits. It needs no game loaded."""

from __future__ import annotations

import asyncio
import logging
import math
import resource
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any, AnyStr, cast

from aiosmtpd.smtp import SMTP, Envelope, Session

from pbmserv.config import cannot_listen
from pbmserv.pipes import EventLike
from pbmserv.service.intake.arrival import Intake, Mail, content_problem, path_problem
from pbmserv.service.intake.room import NO_ROOM
from pbmserv.smtp_rates import IntakeRates, declared_size
from pbmserv.store.inbound import OUTAGE_ERRORS, UNSTORABLE_ERRORS

log = logging.getLogger(__name__)


#: connections the kernel queues for the listener before it accepts them
#: (asyncio's default, 100, dropped the connections of a crowd arriving at once)
LISTEN_BACKLOG = 1024
#: a session waiting this long for the client's next command may be closed
#: to let a new one in when a limit on sessions is reached (a real client
#: answers within milliseconds; at 1 s a crowd of addresses replaced every
#: idle session a second after it began, making sessions as fast as it could)
IDLE_ENOUGH_TO_MAKE_ROOM_SECONDS = 5.0
#: bytes a client may send past the mail size limit before it is answered:
#: more, and the session is closed (reading on to the end cost CPU for ever)
SIZE_LIMIT_SLACK_BYTES = 64 * 1024
#: error answers in one session before it is closed (a client trying
#: address after address, each costing a look-up)
MOST_ERRORS = 20


class IntakeHandler:
    """Answers 250 once the mail is committed (`Intake.accept`: into the
    arrival spool on SQLite, else into the database). Mails that arrive
    while a commit is under way wait for the next one, and are stored
    together by one thread in one transaction (group commit). What could
    never be stored is refused before, with a 5xx for that mail alone."""

    def __init__(self, intake: Intake, wake: EventLike):
        self.intake = intake
        self.wake = wake
        self.address = intake.settings.address.lower()
        self.rates = IntakeRates(intake.settings)
        self._waiting: list[tuple[Mail, asyncio.Future[None]]] = []
        self._storer: asyncio.Task[None] | None = None

    async def handle_MAIL(self, server: SMTP, session: Session, envelope: Envelope, address: str, mail_options: list[str]) -> str:
        problem = path_problem(address)
        if problem is not None:
            return f"553 5.1.7 {problem}"
        # the sender's share is looked at once the recipient says whether the mail is proven (a reply address)
        refusal = await self._no_room() or self.rates.refusal(_client(session), None, declared_size(mail_options), _now())
        if refusal is not None:
            return refusal
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 2.1.0 OK"

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list[str]) -> str:
        problem = path_problem(address)
        if problem is not None:
            return f"553 5.1.3 {problem}"
        if any(rcpt.lower() == address.lower() for rcpt in envelope.rcpt_tos):
            return "250 2.1.5 OK"  # named before: kept once, however often it is named
        if address.lower() == self.address:
            refusal = self.rates.refusal(None, envelope.mail_from or "", declared_size(envelope.mail_options), _now())
            if refusal is not None:
                return refusal
        else:
            if any(rcpt.lower() not in (self.address, address.lower()) for rcpt in envelope.rcpt_tos):
                return "452 4.5.3 one reply address per mail: send the mail to the other one apart"
            guesser = self.rates.recipients_key(_client(session), envelope.mail_from or "")
            if self.rates.refused_recipients.level(guesser, _now()) < 1:
                return "450 4.7.1 too many unknown recipients from you, try again later"
            refusal = await asyncio.to_thread(self.intake.recipient_problem, address)
            if refusal is not None:
                self.rates.refused_recipients.take(guesser, 1, _now())
                return f"550 5.1.1 <{address}>: {refusal}"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        problem = content_problem(raw)
        if problem is not None:
            return f"554 5.6.0 {problem}"
        reply_address = next((rcpt for rcpt in envelope.rcpt_tos if rcpt.lower() != self.address), "")
        client, sender = _client(session), None if reply_address else envelope.mail_from or ""
        refusal = await self._no_room() or self.rates.refusal(client, sender, len(raw), _now())
        if refusal is not None:
            return refusal
        self.rates.take(client, sender, len(raw), _now())
        stored: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(((raw, envelope.mail_from or "", reply_address), stored))
        if self._storer is None:
            self._storer = asyncio.create_task(self._store_waiting())
        if isinstance(server, LimitedSMTP):
            server.storing = True  # not idle: it waits for us
        try:
            await stored
        except UNSTORABLE_ERRORS:  # it would fail the same way every time: the sender must not retry
            return "554 5.6.0 the mail cannot be stored as it is"
        except Exception:  # the mail is not safe with us: the sender must retry
            return "451 4.3.0 cannot store the mail now, try again later"
        return "250 2.0.0 OK"

    async def _no_room(self) -> str | None:
        """452 while the database's disk or size limit is reached (`service.room`); measured in a thread at most once a second."""
        room = self.intake.room
        if room is None:
            return None
        problem = room.problem() if room.fresh() else await asyncio.to_thread(room.problem)
        return None if problem is None else f"452 4.3.1 {NO_ROOM}"

    async def _store_waiting(self) -> None:
        try:
            while self._waiting:
                group, self._waiting = self._waiting, []
                await self._store_group(group)
        finally:
            self._storer = None

    async def _store_group(self, group: list[tuple[Mail, asyncio.Future[None]]]) -> None:
        """One transaction for the group. Should it fail for any reason but
        an outage, the mails are stored one by one, so that only a mail that
        cannot be stored is refused. In an outage they are not: each try
        could wait out the busy timeout, and all would fail the same."""
        error = await self._accept(group)
        if error is None or len(group) == 1 or isinstance(error, OUTAGE_ERRORS):
            self._answer(group, error)
            return
        log.warning("could not store %s inbound mails together (%r); storing them one by one", len(group), error)
        for position, mail in enumerate(group):
            error = await self._accept([mail])
            self._answer([mail], error)
            if isinstance(error, OUTAGE_ERRORS):
                self._answer(group[position + 1:], error)
                return

    async def _accept(self, mails: list[tuple[Mail, asyncio.Future[None]]]) -> Exception | None:
        try:
            await asyncio.to_thread(self.intake.accept, [mail for mail, _ in mails])
        except Exception as error:
            log.exception("could not store %s inbound mail(s)", len(mails))
            return error
        self.wake.set()
        return None

    @staticmethod
    def _answer(mails: list[tuple[Mail, asyncio.Future[None]]], error: Exception | None) -> None:
        for _, stored in mails:
            if stored.done():  # its client has gone (the session's task, and with it the wait, was cancelled)
                continue
            if error is None:
                stored.set_result(None)
            else:
                stored.set_exception(error)


def _client(session: Session) -> str:
    """The client's address, as the limits count it."""
    peer = session.peer
    return str(peer[0]) if isinstance(peer, tuple) else str(peer)


def _now() -> float:
    return asyncio.get_running_loop().time()


class SessionLimits:
    """The SMTP sessions open now, in all and by client address. At a limit
    a new session is let in only if one that counts towards that limit has
    waited long enough for its client's next command: that one is closed to
    make room. At the limit in all, a client holding none, or two fewer
    than another, is let in at the expense of the idlest session of the
    clients holding the most, however briefly idle. So a crowd of idle or
    trickling connections, even from many addresses, cannot keep everyone
    else out for as long as the timeouts let it stay; and clients one
    session apart do not take sessions from each other in turn, each
    making a session only for the next to close it.

    A crowd asks for room hundreds of times a second, so the usual answer,
    no, is found without looking at every session: how many clients hold
    how many sessions is kept as they come and go, and so is a time before
    which no session has been waiting (a session's wait only ever starts
    later, see `LimitedSMTP.idle_since`)."""

    def __init__(self, most: int, most_per_client: int):
        self.most = most
        self.most_per_client = most_per_client
        self.open: defaultdict[str, set[LimitedSMTP]] = defaultdict(set)
        self.total = 0
        #: how many clients hold so many sessions (0 for counts nobody holds)
        self.holding: Counter[int] = Counter()
        #: no session that is not storing has been idle since before this
        self.idle_floor = -math.inf

    def enter(self, client: str, now: float) -> bool:
        """Whether a new session from `client` may come in (`add` it then), making room if a limit is reached."""
        held = len(self.open.get(client, ()))
        most_held = max((count for count, clients in self.holding.items() if clients), default=0)
        fewer = False  # the client holds none, or two fewer than another: that one's idlest makes room, idle long or not
        if held >= self.most_per_client:
            crowd: set[LimitedSMTP] | None = self.open[client]
        elif self.total >= self.most and (held == 0 or held + 1 < most_held):
            crowd, fewer = set().union(*(sessions for sessions in self.open.values() if len(sessions) == most_held)), True
        elif self.total >= self.most:
            if now - self.idle_floor < IDLE_ENOUGH_TO_MAKE_ROOM_SECONDS:
                return False
            crowd = set().union(*self.open.values())
        else:
            crowd = None
        if crowd is not None:
            idlest = min((other for other in crowd if not other.storing), key=lambda other: other.idle_since, default=None)
            if idlest is None or not fewer and now - idlest.idle_since < IDLE_ENOUGH_TO_MAKE_ROOM_SECONDS:
                if idlest is not None and len(crowd) == self.total:
                    self.idle_floor = idlest.idle_since
                return False
            self.leave(idlest, idlest.client)
            idlest.close_session("busy, closing idle session to make room")
        return True

    def add(self, session: LimitedSMTP, client: str) -> None:
        sessions = self.open[client]
        self._recount(len(sessions), len(sessions) + 1)
        sessions.add(session)
        self.total += 1

    def leave(self, session: LimitedSMTP, client: str) -> None:
        """Count `session` out (once, however often it is called)."""
        sessions = self.open.get(client)
        if sessions is None or session not in sessions:
            return
        self._recount(len(sessions), len(sessions) - 1)
        sessions.discard(session)
        self.total -= 1
        if not sessions:
            del self.open[client]

    def _recount(self, before: int, after: int) -> None:
        """A client went from holding `before` sessions to `after`."""
        if before:
            self.holding[before] -= 1
        if after:
            self.holding[after] += 1


class LimitedSMTP(SMTP):
    """aiosmtpd's SMTP session, with what a server open to the internet
    needs besides: at most so many sessions at once (in all and per client),
    a limit on how long a session lasts in all, and an answer (421) when it
    is closed for taking too long. aiosmtpd's own timeout (`timeout`)
    restarts with every command, so by itself a client sending one now
    and then could keep its session for ever. A client that sends on past
    the size limit without an answer, or errs too often, is sent away too."""

    def __init__(self, handler: Any, limits: SessionLimits, session_seconds: float, client: str, **options: Any):
        super().__init__(handler, **options)
        self.limits = limits
        self.session_seconds = session_seconds
        self.client = client  # its address, as the limits count it
        #: the last complete command, the connection, or the answer to a stored mail:
        #: only ever later, which `SessionLimits.idle_floor` relies on
        self.idle_since = self.loop.time()
        self.storing = False  # its mail is being stored: it waits for us, not we for it
        self.unanswered_bytes = 0
        self.errors = 0
        self._session_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._session_timer = self.loop.call_later(self.session_seconds, self.close_session, "session too long")
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        self.limits.leave(self, self.client)
        assert self._session_timer is not None
        self._session_timer.cancel()
        super().connection_lost(error)

    def data_received(self, data: bytes) -> None:
        self.unanswered_bytes += len(data)
        if self.data_size_limit and self.unanswered_bytes > self.data_size_limit + SIZE_LIMIT_SLACK_BYTES:
            self.close_session("mail data past the size limit", "552 5.3.4")
            return
        super().data_received(data)

    async def push(self, status: AnyStr) -> None:
        self.unanswered_bytes = 0
        if self.storing:  # the answer to its mail: from now on it is the client we wait for
            self.storing = False
            self.idle_since = self.loop.time()
        await super().push(status)
        if status[:1] in ("4", "5", b"4", b"5"):
            self.errors += 1
            if self.errors >= MOST_ERRORS:
                self.close_session("too many errors")

    def _reset_timeout(self, duration: float | None = None) -> None:  # aiosmtpd's: at the connection and each command
        self.idle_since = self.loop.time()
        super()._reset_timeout(duration)

    def _timeout_cb(self) -> None:  # aiosmtpd's timeout: no command (or no end of the mail data) in time
        self.close_session("timeout")

    def close_session(self, reason: str, code: str = "421 4.4.2") -> None:
        connection = cast(asyncio.Transport | None, self.transport)
        if connection is None:
            return
        if connection.is_closing():  # a close begun before, which may wait for ever on a client that reads nothing
            connection.abort()
            return
        log.info("%r: %s, closing the session", self.session.peer if self.session else None, reason)
        connection.write(f"{code} {self.hostname} {reason}, closing connection\r\n".encode())
        if connection.get_write_buffer_size():  # a client that reads nothing would keep a close() waiting for ever
            connection.abort()
        else:
            connection.close()


class SessionGate(asyncio.Protocol):
    """What a connection meets first: the limits are asked for room before
    an SMTP session is made for it, and a connection turned away is
    answered here. Making a session costs about half a millisecond (aiosmtpd
    looks up its commands and hooks each time), which a crowd of refused
    connections would otherwise cost the listener in full."""

    def __init__(self, limits: SessionLimits, session: Callable[[str], LimitedSMTP], hostname: str):
        self.limits = limits
        self.session = session
        self.hostname = hostname

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        connection = cast(asyncio.Transport, transport)
        client = (connection.get_extra_info("peername") or ("",))[0]
        if not self.limits.enter(client, asyncio.get_running_loop().time()):
            connection.write(f"421 4.7.0 {self.hostname} too many connections, try again later\r\n".encode())
            connection.close()
            return
        session = self.session(client)
        self.limits.add(session, client)
        connection.set_protocol(session)
        session.connection_made(connection)


#: files the listener's process keeps open besides its sessions (the
#: database, logs, the spool, the pipes to its children)
OTHER_OPEN_FILES = 256


def raise_open_file_limit(most_sessions: int) -> int:
    """Raise this process's soft limit on open files (towards the hard one)
    to hold every session it admits and a full listen backlog besides, as
    connections of a crowd are accepted before the ones over the limit are
    closed: at a common soft limit of 1,024 a crowd could otherwise exhaust
    it. Returns the soft limit now."""
    needed = most_sessions + LISTEN_BACKLOG + OTHER_OPEN_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if wanted > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    if wanted < needed:
        log.warning("open files are limited to %d here (hard limit); a crowd of connections needs %d", wanted, needed)
    return wanted


async def start_listener(intake: Intake, wake: EventLike, host: str, port: int) -> asyncio.Server:
    """The SMTP server on (host, port); port 0 picks a free port. An address
    in use is worth trying again (an earlier server may be stopping); one
    that cannot be had on this machine is a setting to change."""
    settings = intake.settings
    raise_open_file_limit(settings.max_sessions)
    handler = IntakeHandler(intake, wake)
    limits = SessionLimits(settings.max_sessions, settings.max_sessions_per_client)
    try:
        return await asyncio.get_running_loop().create_server(
            lambda: SessionGate(limits, lambda client: LimitedSMTP(
                handler, limits, settings.session_seconds, client, hostname=settings.hostname,
                data_size_limit=settings.max_message_bytes, timeout=settings.command_seconds,
            ), settings.hostname),
            host,
            port,
            backlog=LISTEN_BACKLOG,
        )
    except OSError as error:
        raise cannot_listen(error, f"{host}:{port}", "[smtp] listen or PBMSERV_LISTEN", holder="pbmserv serve") from error
