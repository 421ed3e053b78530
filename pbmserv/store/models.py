"""The tables. Alembic (migrations/ at the top of the checkout) owns the schema; these models must match it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    #: a model's Core table: declared as what it is (SQLAlchemy types it as any FromClause)
    __table__: ClassVar[Table]


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    userid: Mapped[str] = mapped_column(String(20), unique=True)
    password_hash: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: when the operator disabled the account (`pbmserv-admin users disable`); None: it may send commands
    disabled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    disabled_reason: Mapped[str] = mapped_column(Text, default="", server_default="")
    #: keys the account's reply addresses (`service.reply_addresses`); drawn anew with every new password
    reply_secret: Mapped[str] = mapped_column(String(32), default="", server_default="")
    #: whether the account's board mails carry a picture of the board (`pictures on`)
    pictures: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: the tz database zone its board mails show deadlines in besides UTC (`timezone`); "": UTC alone
    timezone: Mapped[str] = mapped_column(String(64), default="", server_default="")
    #: which board mails of its boards the account gets (`notifications`): every | turn | digest | results
    notifications: Mapped[str] = mapped_column(String(8), default="every", server_default="every")
    #: the hour of its day (in `timezone`) the daily digest comes at, for the boards in digest mode
    digest_hour: Mapped[int] = mapped_column(Integer, default=8, server_default="8")
    #: when its last digest was sent; None: never (one a day, `service.timers.digests`)
    digest_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    addresses: Mapped[list[Address]] = relationship(
        back_populates="user", order_by="Address.position", cascade="all, delete-orphan"
    )


class Address(Base):
    __tablename__ = "addresses"
    __table_args__ = (UniqueConstraint("user_id", "address"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    address: Mapped[str] = mapped_column(String(320), index=True)
    position: Mapped[int] = mapped_column(Integer)
    #: when mail to it was confirmed (by a mail from it, or its code); None: it gets no mail but the request to confirm
    confirmed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    user: Mapped[User] = relationship(back_populates="addresses")


class Board(Base):
    """One game in progress or finished: `board` is its number within its game type."""

    __tablename__ = "boards"
    __table_args__ = (UniqueConstraint("game_type", "board"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_type: Mapped[str] = mapped_column(String(40))
    board: Mapped[int] = mapped_column(Integer)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    timers: Mapped[dict[str, Any]] = mapped_column(JSON)
    seats: Mapped[list[str]] = mapped_column(JSON)
    state: Mapped[Any] = mapped_column(JSON)
    move_count: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), index=True)  # active | finished
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    version: Mapped[int] = mapped_column(Integer, nullable=False)
    #: when the player to move was last reminded (`cleanup`); None = not since the last move
    nagged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: the open draw offer or undo request: {"kind": "draw"|"undo", "by": seat, "accepted": [seats]}
    proposal: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    moves: Mapped[list[Move]] = relationship(
        back_populates="board_row", order_by="Move.number", cascade="all, delete-orphan"
    )

    __mapper_args__ = {"version_id_col": version}


class Move(Base):
    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("board_id", "number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    secret: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    comment: Mapped[str] = mapped_column(Text, default="")
    #: played from the player's queue (`queue`), shown as "(Auto)"
    auto: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    board_row: Mapped[Board] = relationship(back_populates="moves")


class QueuedMove(Base):
    """A player's pending move on a board, played when their turn comes; secret until then."""

    __tablename__ = "queued_moves"
    __table_args__ = (UniqueConstraint("board_id", "seat"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Subscription(Base):
    """A user who is not a player gets a board's mails: all of them, or only
    the final one (`final_only`, from `notify`)."""

    __tablename__ = "subscriptions"
    __table_args__ = (UniqueConstraint("user_id", "board_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"), index=True)
    final_only: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    user: Mapped[User] = relationship()


class BoardNotification(Base):
    """A player's choice of mails for one of their boards (`GAME notifications
    board`), in place of the account's own (`users.notifications`)."""

    __tablename__ = "board_notifications"
    __table_args__ = (UniqueConstraint("board_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    board_id: Mapped[int] = mapped_column(ForeignKey("boards.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    mode: Mapped[str] = mapped_column(String(8))


class GamePolicy(Base):
    """A user's settings for one game type: challenge policy (accept/reject,
    limit, seek) and whether every new board of the type is subscribed to."""

    __tablename__ = "game_policies"
    __table_args__ = (UniqueConstraint("user_id", "game_type"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    game_type: Mapped[str] = mapped_column(String(40))
    accepts_challenges: Mapped[bool] = mapped_column(Boolean, default=True)
    game_limit: Mapped[int] = mapped_column(Integer, default=0)  # most active games, 0 = no limit
    seeking: Mapped[int] = mapped_column(Integer, default=0)  # how many more games wanted
    #: since when the player waits for the next game they seek; None while they seek none
    seeking_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: after how many hours of waiting the bot takes the next game sought; 0: never (`seek ... -bot=HOURS`)
    bot_after_hours: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    subscribes_new_boards: Mapped[bool] = mapped_column(Boolean, default=False)
    user: Mapped[User] = relationship()


class OpenChallenge(Base):
    """A challenge anyone may take (`GAME open`): its poser has the first
    seat; its `id` is its number, never used again (a number read in a list
    never names another challenge later). Taken, withdrawn or expired, it is deleted."""

    __tablename__ = "open_challenges"
    __table_args__ = {"sqlite_autoincrement": True}

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_type: Mapped[str] = mapped_column(String(40), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    timers: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class Rating(Base):
    """A user's rating and record in one game type, from finished boards."""

    __tablename__ = "ratings"
    __table_args__ = (UniqueConstraint("user_id", "game_type"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    game_type: Mapped[str] = mapped_column(String(40))
    rating: Mapped[int] = mapped_column(Integer)
    won: Mapped[int] = mapped_column(Integer, default=0)
    lost: Mapped[int] = mapped_column(Integer, default=0)
    drawn: Mapped[int] = mapped_column(Integer, default=0)
    last_game_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    user: Mapped[User] = relationship()


class Vacation(Base):
    """A time in which the server neither nags nor forfeits the user; `ended_at` is None while it lasts."""

    __tablename__ = "vacations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class InboundMail(Base):
    """A mail as received; `dedup_key` makes a second delivery of it recognisable."""

    __tablename__ = "inbound_mails"
    #: pending mail in arrival order, and the players' lane in it (`store.inbound.next_pending`), by index
    #: alone; a sender's pending mail, to join the lane when the address is confirmed; processed mail past
    #: its retention (`store.inbound.delete_processed`)
    __table_args__ = (
        Index("ix_inbound_mails_status_id", "status", "id"),
        Index("ix_inbound_mails_lane", "status", "from_player", "id"),
        Index("ix_inbound_mails_status_envelope_sender", "status", "envelope_sender"),
        Index("ix_inbound_mails_status_processed_at", "status", "processed_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    envelope_sender: Mapped[str] = mapped_column(String(320))
    message_id: Mapped[str] = mapped_column(String(998))
    dedup_key: Mapped[str] = mapped_column(String(64), unique=True)
    #: the mail as kept: as it came, or with its passwords masked (while it
    #: is pending, only its headers, and the original in `sealed`)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    #: the mail as it came, sealed with the server's key (`store.key`), while
    #: it holds passwords and is pending or failed; None once processed, or
    #: for a mail without passwords (`raw` is the original then)
    sealed: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)
    status: Mapped[str] = mapped_column(String(16))  # pending | done | failed | dropped
    error: Mapped[str] = mapped_column(Text, default="")
    #: in the players' lane: sent from a confirmed address of an account (when stored, or since), and
    #: not left to wait its turn (`store.inbound.WAITS_ITS_TURN`); under a backlog taken first
    from_player: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: the reply address the mail was sent to, as kept (`service.reply_addresses.kept_form`); "" for the server's own
    reply_token: Mapped[str] = mapped_column(String(80), default="", server_default="")


class OutboxMail(Base):
    __tablename__ = "outbox"
    #: the hourly caps count the mails of some kinds to a recipient since a time, and their bytes, from the index
    #: alone; sent mail past its retention (`store.outbox.delete_finished`)
    __table_args__ = (
        Index("ix_outbox_caps", "recipient", "created_at", "kind", "size"),
        Index("ix_outbox_status_created_at", "status", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    inbound_id: Mapped[int | None] = mapped_column(
        ForeignKey("inbound_mails.id", ondelete="SET NULL"), nullable=True, index=True
    )
    recipient: Mapped[str] = mapped_column(String(320))
    message_id: Mapped[str] = mapped_column(String(998))
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    #: the bytes of `raw` as queued, for the caps on bytes
    size: Mapped[int] = mapped_column(Integer, server_default="0")
    status: Mapped[str] = mapped_column(String(16), index=True)  # pending | sent | dead
    kind: Mapped[str] = mapped_column(String(8), server_default="answer")  # board | answer | error | relay | confirm | asked | chat
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_try_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    last_error: Mapped[str] = mapped_column(Text, default="")
    #: who holds the claim on a pending mail: the `serve` that claimed it (its name, the same across its
    #: restarts) and the deliverer process it claimed it for; empty for `receive` and `pbmserv deliver`
    claimed_by: Mapped[str] = mapped_column(String(320), default="", server_default="")
    claim_token: Mapped[str] = mapped_column(String(32), default="", server_default="")


class RateEvent(Base):
    """Something counted against a rate limit (a failed password check, a
    message sent, a challenge): what, for whom (`key`) and when."""

    __tablename__ = "rate_events"
    __table_args__ = (Index("ix_rate_events_kind_key_at", "kind", "key", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(320))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
