"""Core statements run on the database driver's own cursor.

A move takes some ten statements, and through `Connection.execute` each
one costs SQLAlchemy several times what the database spends on it: the
compiled-cache lookup, an execution context, a result object and its
rows. For the few statements on the path of every move that overhead was
about a fifth of the worker's CPU. So these are compiled by SQLAlchemy once
per dialect (and set of parameters), and run on the DBAPI cursor of the
connection, inside its transaction, with SQLAlchemy's own bind and result
processing for their column types. A driver error is raised as the
SQLAlchemy exception `Connection.execute` would raise (an OperationalError
still makes the worker retry its batch), and a lost connection is
invalidated as SQLAlchemy would invalidate it. A connection without a
transaction begins one, as `Connection.execute` would. What SQLAlchemy's
events and `echo` see of these statements: nothing.

An engine made with `[database] prepared = false` (`PLAIN`, set by
`database.make_engine`) runs every one of them through `Connection.execute`
instead, where echo and events see them: for finding out whether a fault
lies in this module, and for watching the SQL.

Statements whose SQL changes from one execution to the next (an expanding
IN, literal rendering) cannot be prepared; `Prepared` refuses them. It
also refuses a parameter the statement does not have and a missing one
that has no value of its own (an ArgumentError), where the cursor would
bind NULL for a misspelt name without a word; it does so on either path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.expression import ClauseElement, Executable

Processor = Callable[[Any], Any] | None

#: engine execution option: run prepared statements through `Connection.execute` (see the module's docstring)
PLAIN = "pbmserv_plain"


@dataclass(frozen=True)
class _Compiled:
    sql: str
    names: tuple[str, ...]  # every bind, in the order of the SQL for positional drivers
    positional: bool
    binds: tuple[Processor, ...]  # by `names`
    defaults: tuple[Any, ...]  # by `names`: the value of a bind the caller does not give
    results: tuple[Processor, ...] | None  # by selected column; None: the statement returns no rows

    def arguments(self, params: Mapping[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
        values = []
        for name, default, process in zip(self.names, self.defaults, self.binds):
            value = params.get(name, default)
            values.append(value if process is None else process(value))
        return tuple(values) if self.positional else dict(zip(self.names, values))


class Prepared:
    """A Core statement to run on the driver's cursor (see the module's docstring)."""

    def __init__(self, statement: Executable):
        self.statement = statement
        self._compiled: dict[tuple[str, tuple[str, ...]], _Compiled] = {}

    def rows(self, connection: Connection, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows a query returns, each value as SQLAlchemy would give it."""
        compiled = self._compile(connection.dialect, params)
        assert compiled.results is not None, "not a query"
        if _plain(connection):
            return [tuple(row) for row in connection.execute(self.statement, params)]
        with _cursor(connection, compiled.sql, compiled.arguments(params)) as cursor:
            fetched = cursor.fetchall()
        processors = compiled.results
        if not any(processors):
            return [tuple(row) for row in fetched]
        return [tuple(value if process is None else process(value) for process, value in zip(processors, row)) for row in fetched]

    def run(self, connection: Connection, params: Mapping[str, Any]) -> int:
        """Run a statement that returns no rows; returns how many rows it changed."""
        compiled = self._compile(connection.dialect, params)
        if _plain(connection):
            return connection.execute(self.statement, params).rowcount
        with _cursor(connection, compiled.sql, compiled.arguments(params)) as cursor:
            return cursor.rowcount

    def _compile(self, dialect: Dialect, params: Mapping[str, Any]) -> _Compiled:
        key = (dialect.name, tuple(params))
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = _compile(self.statement, dialect, list(params))
        return compiled


def _compile(statement: Executable, dialect: Dialect, keys: list[str]) -> _Compiled:
    assert isinstance(statement, ClauseElement), "a Core statement"
    compiled = statement.compile(dialect=dialect, column_keys=keys)
    assert isinstance(compiled, SQLCompiler)
    if compiled.literal_execute_params or compiled.post_compile_params or compiled.escaped_bind_names:
        raise ValueError(f"its SQL is made anew for each execution, so it cannot be prepared: {compiled.string}")
    names = tuple(compiled.positiontup or ()) if compiled.positional else tuple(compiled.binds)
    binds = tuple(compiled.binds[name] for name in names)
    # what `Connection.execute` refuses, and more: a misspelt name would otherwise bind NULL, or nothing
    missing = sorted({bind.key for bind in binds if bind.required} - set(keys))
    if missing:
        raise ArgumentError(f"a value is required for the parameters {', '.join(missing)} of: {compiled.string}")
    unknown = sorted(set(keys) - set(names))
    if unknown:
        raise ArgumentError(f"the statement has no parameters {', '.join(unknown)}: {compiled.string}")
    selected = getattr(statement, "selected_columns", None)
    return _Compiled(
        sql=compiled.string,
        names=names,
        positional=compiled.positional,
        binds=tuple(bind.type.dialect_impl(dialect).bind_processor(dialect) for bind in binds),
        defaults=tuple(bind.effective_value for bind in binds),
        results=None if selected is None else tuple(
            column.type.dialect_impl(dialect).result_processor(dialect, None) for column in selected
        ),
    )


def run_sql(connection: Connection, sql: str) -> None:
    """Plain SQL without parameters or rows (a SAVEPOINT, say) on the driver's cursor."""
    if _plain(connection):
        connection.exec_driver_sql(sql)
        return
    with _cursor(connection, sql, ()):
        pass


def _plain(connection: Connection) -> bool:
    return bool(connection.get_execution_options().get(PLAIN))


@contextmanager
def _cursor(connection: Connection, sql: str, arguments: tuple[Any, ...] | dict[str, Any]) -> Iterator[Any]:
    """The driver's cursor once it has run `sql`, closed after the block."""
    if not connection.in_transaction():  # begin as `Connection.execute` would (on SQLite, that takes the write lock)
        connection.begin()
    dbapi_connection = connection.connection
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(sql, arguments)
    except connection.dialect.loaded_dbapi.Error as error:
        lost = connection.dialect.is_disconnect(error, dbapi_connection, cursor)
        cursor.close()
        if lost:
            connection.invalidate(error)
        raise DBAPIError.instance(
            sql, arguments, error, connection.dialect.loaded_dbapi.Error,
            connection_invalidated=lost, dialect=connection.dialect,
        ) from error
    try:
        yield cursor
    finally:
        cursor.close()
