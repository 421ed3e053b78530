from __future__ import annotations

from pbmserv.refusal import Refusal


class ServiceError(Refusal):
    """A command that cannot be carried out; `fix` says how to do it right,
    and a refused move carries the position as `board_text`."""


class UnknownUser(ServiceError):
    """A command names a userid that no account has."""


class UnconfirmedUser(ServiceError):
    """A command names an account none of whose addresses is confirmed yet."""


class WaitsItsTurn(Exception):
    """A mail taken ahead of older mail names an account not known or not
    confirmed yet: it is left pending, to be processed in arrival order
    (the older mail may be that account's signup, or its confirmation)."""


def wait_if_ahead(refusal: Refusal, ahead: bool) -> None:
    """Raise WaitsItsTurn for a mail taken ahead of older mail that names an unknown or unconfirmed account."""
    if ahead and isinstance(refusal, UnknownUser | UnconfirmedUser):
        raise WaitsItsTurn from refusal
