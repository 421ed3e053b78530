"""The command line tools; what both of them share."""

from __future__ import annotations

import sys

import click

from pbmserv.config import ConfigError, Settings, load_settings

EX_CONFIG = 78  # sysexits: configuration error

config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False), help="TOML settings file (or $PBMSERV_CONFIG)."
)


def settings_or_exit(config_path: str | None, program: str) -> Settings:
    """The settings, or a one-line error and exit 78 if they cannot be read."""
    try:
        return load_settings(config_path)
    except ConfigError as error:
        click.echo(f"{program}: {error}", err=True)
        sys.exit(EX_CONFIG)
