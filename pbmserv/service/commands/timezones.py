"""`timezone ZONE`: the time zone a player's board mails show their
deadlines in besides UTC (docs/decisions/0149-deadlines-in-board-mails.md)."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from pbmserv.protocol.commands import Timezone
from pbmserv.service.commands.accounts import to_account_and_sender
from pbmserv.service.commands.handling import handles
from pbmserv.service.play import deadlines, views
from pbmserv.service.processing.context import Context, Reply, as_utc
from pbmserv.service.processing.errors import ServiceError
from pbmserv.store import users


@handles(Timezone)
def timezone(ctx: Context, command: Timezone) -> list[Reply]:
    user = ctx.authenticate(command.userid, command.password)
    zone = deadlines.zone_named(command.zone)
    if zone is None:
        raise ServiceError(
            f"'{command.zone}' is not a time zone this server knows.",
            "name your zone as the tz database does, a region and a city such as Europe/Berlin, America/New_York "
            "or Asia/Kolkata (in any case), or UTC",
        )
    kept = "" if zone == "UTC" else zone
    if kept != user.timezone:
        users.set_timezone(ctx.connection, user.id, kept)
    if kept:
        local = as_utc(ctx.now).astimezone(ZoneInfo(zone))
        said = (
            f"The deadlines in {user.userid}'s board mails are shown in UTC and in {zone} from the next mail on: "
            f"it is {local:%Y-%m-%d %H:%M} there now, {as_utc(ctx.now):%H:%M} UTC. 'timezone {user.userid} password "
            "UTC' shows UTC alone again."
        )
    else:
        said = f"The deadlines in {user.userid}'s board mails are shown in UTC alone from the next mail on."
    recipients = to_account_and_sender(ctx, user)
    return [Reply(recipients, f"pbmserv timezone {user.userid}", views.wrap(said, hang="") + "\n")]
