"""The command line tools; what both of them share."""

from __future__ import annotations

import sys

import click

from pbmserv.config import ConfigError, Settings, load_settings
from pbmserv.service.processor import Processor

EX_CONFIG = 78  # sysexits: configuration error

config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="TOML settings file (or $PBMSERV_CONFIG)."
)


def key_or_exit(processor: Processor, program: str) -> None:
    """Read (or make) the server's key now, so that a server that cannot
    have one says so at once, not at its first mail; exit 78 if it cannot."""
    try:
        processor.key
    except (ConfigError, OSError) as error:
        click.echo(f"{program}: no server key: {error}", err=True)
        sys.exit(EX_CONFIG)


def settings_or_exit(config_path: str | None, program: str) -> Settings:
    """The settings, or a one-line error and exit 78 if they cannot be read."""
    try:
        return load_settings(config_path)
    except ConfigError as error:
        click.echo(f"{program}: {error}", err=True)
        sys.exit(EX_CONFIG)
