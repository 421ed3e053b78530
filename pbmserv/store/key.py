"""The server's secret key: 32 random bytes in a file of their own (mode
0600, refused if others may read it), made on first use with a database
that holds no mail yet, and never again by itself once it does
(`require_key`, docs/decisions/0156-the-key-as-an-operator-expects.md). It keys the codes that confirm an address, and
it seals a mail that holds passwords from the moment it is stored until it
is processed (AES-GCM, from the `cryptography` package): the database never
holds such a mail in clear, its write-ahead log neither. It lives outside
the database, so that a copy of the database (a backup, a dump) does not
carry it; every process of one server must use the same file.

Where it is: the setting `key_file`; by default beside a SQLite database
(`<database file>-key`). A PostgreSQL server has no such place, so there
the setting is required.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pbmserv.config import ConfigError, Settings
from pbmserv.store.urls import sqlite_file

KEY_BYTES = 32
#: the letters of a code: no l, o, 0, 1, which are easily misread
CODE_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
#: what sealed data starts with (its format, version 1), and the nonce after it
SEALED = b"pbmserv-sealed-1:"
NONCE_BYTES = 12


def is_sealed(data: bytes) -> bool:
    return data.startswith(SEALED)


class Unsealable(Exception):
    """Sealed data that this key cannot open (another server's key, or damaged)."""


@dataclass(frozen=True)
class ServerKey:
    secret: bytes

    def code(self, *parts: str, length: int = 10) -> str:
        """A code only this server can make from `parts`: lower-case letters and digits."""
        digest = self._mac("code", *parts)
        return "".join(CODE_ALPHABET[byte % len(CODE_ALPHABET)] for byte in digest[:length])

    def seal(self, data: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return SEALED + nonce + self._sealing.encrypt(nonce, data, SEALED)

    def unseal(self, sealed: bytes) -> bytes:
        if not is_sealed(sealed):
            raise Unsealable("not sealed data")
        nonce = sealed[len(SEALED):len(SEALED) + NONCE_BYTES]
        try:
            return self._sealing.decrypt(nonce, sealed[len(SEALED) + NONCE_BYTES:], SEALED)
        except InvalidTag as error:
            raise Unsealable("sealed with another key, or damaged") from error

    @cached_property
    def _sealing(self) -> AESGCM:
        return AESGCM(self._mac("seal"))

    def _mac(self, purpose: str, *parts: str) -> bytes:
        """A key or code of its own for each purpose, derived from the one secret."""
        return hmac.new(self.secret, "\0".join((purpose, *parts)).encode(), hashlib.sha256).digest()


def key_path(settings: Settings) -> Path:
    if settings.key_file:
        return Path(settings.key_file)
    database = sqlite_file(settings.database_url)
    if database is not None:
        return Path(f"{database}-key")
    raise ConfigError(
        "set key_file ([database] key_file, or PBMSERV_KEY_FILE): the file of the server's secret key, "
        "the same for every process of the server (it is made if it does not exist)"
    )


def require_key(settings: Settings, holds_mail: Callable[[], bool]) -> None:
    """Refuse to go on without the key file once the database holds mail
    (`holds_mail()`, asked only if the file is missing; see
    `statements.HOLDS_MAIL`): a new key made then would turn every
    reply address mailed so far, and every mail waiting sealed, into
    nonsense, where the operator most likely lost the file or pointed
    `key_file` elsewhere. A new database gets its key made (`server_key`)."""
    path = key_path(settings)
    if not path.exists() and holds_mail():
        raise ConfigError(
            f"no server key at {path}, but the database already holds mail sealed with one and players hold "
            "reply addresses made with it: restore the key file from where you keep it (set [database] key_file "
            "or PBMSERV_KEY_FILE if it is elsewhere), or start over with `pbmserv-admin key new`"
        )


def server_key(settings: Settings) -> ServerKey:
    """The key in the file `key_path(settings)`, made there if there is none;
    read once per process (intake and the processor of one `receive` share it).
    A ConfigError that says which file and why if there can be none."""
    try:
        path = key_path(settings)
        return _key_at(path)
    except ConfigError as error:
        raise ConfigError(f"no server key: {error}") from error
    except OSError as error:
        raise ConfigError(
            f"no server key: cannot read or make {path}: {error.strerror} (set [database] key_file or PBMSERV_KEY_FILE)"
        ) from error


@cache
def _key_at(path: Path) -> ServerKey:
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    if make_key(path):
        logging.getLogger("pbmserv").info("made a new server key at %s: keep it apart from the backups", path)
    return _read(path)


def make_key(path: Path) -> bool:
    """Write a new key at `path` (mode 0600) unless there is one: whether it did."""
    staged = path.with_name(f"{path.name}.{os.getpid()}.new")
    descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(descriptor, os.urandom(KEY_BYTES))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    try:
        os.link(staged, path)  # fails if another process made the key meanwhile: then that one holds
        return True
    except FileExistsError:
        return False
    finally:
        os.unlink(staged)


def _read(path: Path) -> ServerKey:
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise ConfigError(
            f"the key file {path} may be read by others (mode {mode:04o}): `chmod 600 {path}` "
            "(as ssh refuses a private key others can read)"
        )
    secret = path.read_bytes()
    if len(secret) < KEY_BYTES:
        raise ConfigError(f"the key file {path} holds {len(secret)} bytes, fewer than {KEY_BYTES}")
    return ServerKey(secret)
