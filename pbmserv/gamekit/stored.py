"""A frozen dataclass as JSON-compatible data and back, read from its
fields' type hints: the default `Game.encode`/`Game.decode`.

A dataclass becomes an object of its fields in their order, a tuple a list;
None, bools, ints and strs stay as they are. Decoding follows the hints:
a field may be one of those, a tuple (`tuple[int, str]` or
`tuple[int, ...]`), a nested frozen dataclass, or any of these or None.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from functools import cache
from typing import Any

Decoder = Callable[[Any], Any]

_SCALARS = (bool, int, str)


def to_data(value: Any) -> Any:
    """`value` as JSON-compatible data."""
    if value is None or isinstance(value, _SCALARS):
        return value
    if isinstance(value, tuple):
        return [to_data(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: to_data(getattr(value, name)) for name in _field_names(type(value))}
    raise TypeError(f"{type(value).__name__} has no default stored form: give the game its own encode")


def from_data(cls: type, data: Any, **given: Any) -> Any:
    """The `cls` that `data` stores; fields in `given` are taken as they
    are (a game that stores one field its own way decodes that one itself),
    a field `data` does not hold takes its default (one added since)."""
    if not isinstance(data, dict):
        raise ValueError(f"a stored {cls.__name__} is an object, not {data!r}")
    decoders = _field_decoders(cls)
    return cls(**given, **{name: decode(data[name]) for name, decode in decoders.items() if name in data and name not in given})


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


@cache
def _field_decoders(cls: type) -> dict[str, Decoder]:
    hints = typing.get_type_hints(cls)
    return {name: decoder(hints[name]) for name in _field_names(cls)}


@cache
def decoder(hint: Any) -> Decoder:
    """How to read back the data of a value of type `hint`."""
    if hint is type(None):
        return _expect(lambda data: data is None, hint)
    if hint in _SCALARS:
        if hint is int:
            return _expect(lambda data: isinstance(data, int) and not isinstance(data, bool), hint)
        return _expect(lambda data: isinstance(data, hint), hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return _union(hint, args)
    if origin is tuple:
        return _tuple(args)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return lambda data: from_data(hint, data)
    raise TypeError(f"{hint} has no default stored form: give the game its own decode")


def _expect(fits: Callable[[Any], bool], hint: Any) -> Decoder:
    def check(data: Any) -> Any:
        if not fits(data):
            raise ValueError(f"stored {data!r} is not a {hint.__name__}")
        return data

    return check


def _union(hint: Any, args: tuple[Any, ...]) -> Decoder:
    """`X | None`: None, or what X stores (a union of two types that are
    not None cannot be told apart by its data)."""
    others = [arg for arg in args if arg is not type(None)]
    if len(others) != 1 or len(args) != 2:
        raise TypeError(f"{hint} has no default stored form: only `X | None` unions do")
    inner = decoder(others[0])
    return lambda data: None if data is None else inner(data)


def _tuple(args: tuple[Any, ...]) -> Decoder:
    if len(args) == 2 and args[1] is Ellipsis:
        each = decoder(args[0])
        return lambda data: tuple(each(item) for item in _list(data))
    items = tuple(decoder(arg) for arg in args)

    def fixed(data: Any) -> tuple[Any, ...]:
        listed = _list(data)
        if len(listed) != len(items):
            raise ValueError(f"stored {data!r} does not have {len(items)} items")
        return tuple(decode(item) for decode, item in zip(items, listed))

    return fixed


def _list(data: Any) -> list[Any]:
    if not isinstance(data, list):
        raise ValueError(f"stored {data!r} is not a list")
    return data
