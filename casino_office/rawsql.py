"""The machine API's hot statements as plain SQL, without the ORM's compiler (issue 15).

A ticket transition is a handful of statements by primary key or unique key; compiling each through the
ORM cost more CPU than PostgreSQL spent running it. Here each statement's text is built once per model
and reused, and on PostgreSQL it runs on a server-binding cursor, so psycopg prepares it on the
connection after a few uses (PostgreSQL then skips parsing and planning). Values go in and come out
through the models' own fields (`get_db_prep_save`, the backend's and the fields' converters), so the
rows read and written are exactly what the ORM would read and write, on SQLite too. Django's execute
wrappers (CaptureQueriesContext, the query log) see every statement.

Only the hot path uses this; everything else stays on the ORM.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

from django.db import connection, models
from django.db.backends.utils import CursorWrapper

M = TypeVar("M", bound=models.Model)


def cursor() -> CursorWrapper:
    """A cursor on the default connection whose statements PostgreSQL may keep prepared."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    wrapped: CursorWrapper = connection._prepare_cursor(ServerBindingCursor(connection.connection))  # type: ignore[attr-defined,call-arg]
    return wrapped


@cache
def _fields(model: type[models.Model]) -> tuple["models.Field[Any, Any]", ...]:
    return tuple(model._meta.concrete_fields)


@cache
def columns(model: type[models.Model], alias: str = "") -> str:
    """The model's columns in field order, for a SELECT list that `build` reads back."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(f'{prefix}"{field.column}"' for field in _fields(model))


def width(model: type[models.Model]) -> int:
    return len(_fields(model))


@cache
def _converters(model: type[models.Model], vendor: str) -> tuple[tuple[int, Any, tuple[Any, ...]], ...]:
    """Per column, the backend's and the field's converters, as the ORM's compiler applies them."""
    found = []
    for index, field in enumerate(_fields(model)):
        col = field.get_col(model._meta.db_table)
        converters = tuple(connection.ops.get_db_converters(col) + field.get_db_converters(connection))
        if converters:
            found.append((index, col, converters))
    return tuple(found)


@cache
def _attnames(model: type[models.Model]) -> list[str]:
    return [field.attname for field in _fields(model)]


def build(model: type[M], row: Sequence[Any]) -> M:
    """An instance from a row selected with `columns(model)`, converted as the ORM converts it."""
    values = list(row[: width(model)])
    for index, col, converters in _converters(model, connection.vendor):
        for converter in converters:
            values[index] = converter(values[index], col, connection)
    return model.from_db(connection.alias, _attnames(model), values)


@dataclass(frozen=True)
class Beside:
    """Another row to read and row-lock in the statement that selects or inserts a model's row (PostgreSQL only).

    `where` finds it in `table` (aliased b): with a select it may name the row selected (aliased t); its values
    are `params`. The row is locked only once the main row is (selected and locked, or inserted), so a statement
    waiting for a contested row holds nothing beside it.
    """

    table: str
    columns: tuple[str, ...]
    where: str
    params: tuple[Any, ...]

    def selected(self) -> str:
        return ", ".join(f'b."{column}"' for column in self.columns)


def _select_sql(model: type[models.Model], where: str, lock: bool, related: str, extra: str = "") -> str:
    meta = model._meta
    selected = columns(model, "t")
    join = ""
    if related:
        key = meta.get_field(related)
        other = key.related_model
        selected += ", " + columns(other, "r")
        join = f' JOIN "{other._meta.db_table}" r ON r."{other._meta.pk.column}" = t."{key.column}"'  # type: ignore[union-attr]
    suffix = " FOR UPDATE OF t" if lock and connection.features.has_select_for_update else ""
    if extra:
        selected += ", " + extra
    return f'SELECT {selected} FROM "{meta.db_table}" t{join} WHERE {where}{suffix}'  # noqa: S608 - identifiers from the models


def built(model: type[M], row: Sequence[Any], related: str = "") -> M:
    """An instance (and `related`'s, cached on it) from a row `select_row` or `select_one` read; a new one each call."""
    instance = build(model, row)
    if related:
        key = model._meta.get_field(related)
        key.set_cached_value(instance, build(key.related_model, row[width(model) :]))  # type: ignore[union-attr,arg-type]
    return instance


def select_row(model: type[M], where: str, params: Sequence[Any], *, related: str = "", extra: str = "") -> Any:
    """The first row (a tuple) that `select_one` would read, with `extra` (more SELECT list items, the callers' own
    text) after the model's columns and `related`'s; None when there is none. `built` makes the instance."""
    with cursor() as c:
        c.execute(_select_sql(model, where, False, related, extra), params)
        return c.fetchone()


def select_one(model: type[M], where: str, params: Sequence[Any], *, lock: bool = False, related: str = "") -> M | None:
    """The first row of `model` (aliased t) matching `where`, row-locked with `lock` where the database can.

    `related` names a foreign key to read in the same statement (aliased r), as select_related() would.
    `where` is this module's callers' own text with %s for every value, never input.
    """
    with cursor() as c:
        c.execute(_select_sql(model, where, lock, related), params)
        row = c.fetchone()
    return None if row is None else built(model, row, related)


def select_one_locked_beside(
    model: type[M], where: str, params: Sequence[Any], beside: Beside
) -> tuple[M | None, tuple[Any, ...] | None]:
    """`select_one(..., lock=True)`, and on PostgreSQL `beside`'s row locked once the row is: both in one
    statement. The row, and beside's values (None where the database cannot, or where no such row is)."""
    if connection.vendor != "postgresql":
        return select_one(model, where, params, lock=True), None
    sql = (
        f"WITH t AS ({_select_sql(model, where, True, '')}) SELECT t.*, {beside.selected()} FROM t "  # noqa: S608 - the callers' own text
        f'JOIN "{beside.table}" b ON {beside.where} FOR UPDATE OF b'
    )
    with cursor() as c:
        c.execute(sql, [*params, *beside.params])
        row = c.fetchone()
    if row is None:  # no such row, or none beside it: the row alone (locked already if it is there)
        return select_one(model, where, params, lock=True), None
    return built(model, row), tuple(row[width(model) :])


def _update_sql(instance: models.Model, names: Sequence[str]) -> tuple[str, list[Any]]:
    meta = instance._meta
    fields = [meta.get_field(name) for name in names]
    assignments = ", ".join(f'"{field.column}" = %s' for field in fields)  # type: ignore[union-attr]
    values = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in fields]  # type: ignore[union-attr]
    sql = f'UPDATE "{meta.db_table}" SET {assignments} WHERE "{meta.pk.column}" = %s'  # noqa: S608 - identifiers from the models
    return sql, [*values, instance.pk]


def _insert_sql(instance: models.Model, on_conflict: str) -> tuple[str, list[Any]]:
    meta = instance._meta
    fields = [field for field in _fields(type(instance)) if field is not meta.pk]
    names = ", ".join(f'"{field.column}"' for field in fields)
    marks = ", ".join(["%s"] * len(fields))
    values = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    skip = f' ON CONFLICT ("{on_conflict}") DO NOTHING' if on_conflict else ""
    sql = f'INSERT INTO "{meta.db_table}" ({names}) VALUES ({marks}){skip} RETURNING "{meta.pk.column}"'  # noqa: S608 - identifiers from the models
    return sql, values


def _inserted(instance: models.Model, row: Sequence[Any] | None) -> bool:
    if row is None:
        return False
    instance.pk = row[0]
    instance._state.adding = False
    instance._state.db = connection.alias
    return True


def insert_locking_beside(
    instance: models.Model, *, on_conflict: str, beside: Beside
) -> tuple[bool, tuple[Any, ...] | None]:
    """`insert(instance, on_conflict=...)`, and on PostgreSQL `beside`'s row locked and read in the same statement
    once the row is inserted (not when nothing is). Whether it was inserted, and beside's values (None where
    the database cannot, or where no such row is)."""
    sql, params = _insert_sql(instance, on_conflict)
    if connection.vendor != "postgresql":
        with cursor() as c:
            c.execute(sql, params)
            return _inserted(instance, c.fetchone()), None
    pk = instance._meta.pk.column
    locked = f'SELECT {beside.selected()} FROM "{beside.table}" b WHERE {beside.where} FOR UPDATE'  # noqa: S608 - identifiers from the callers' code
    sql = f'WITH ins AS ({sql}), b AS ({locked}) SELECT ins."{pk}", b.* FROM ins LEFT JOIN b ON true'  # noqa: S608
    with cursor() as c:
        c.execute(sql, [*params, *beside.params])
        row = c.fetchone()
    if not _inserted(instance, row):
        return False, None
    assert row is not None
    values = tuple(row[1:])
    return True, None if values[0] is None else values


def update(instance: models.Model, names: Sequence[str]) -> None:
    """UPDATE the named fields of one row by primary key: what save(update_fields=names) writes."""
    sql, params = _update_sql(instance, names)
    with cursor() as c:
        c.execute(sql, params)


# A statement to run with an insert (on PostgreSQL in the same statement): its SQL and parameters.
Also = tuple[str, Sequence[Any]]


def _run(sql: str, params: Sequence[Any]) -> None:
    with cursor() as c:
        c.execute(sql, params)


def insert(instance: models.Model, *, on_conflict: str = "", also: Also | None = None) -> bool:
    """INSERT one row and set its primary key: what objects.create() writes (no signals are connected here).

    With `on_conflict` (a column with a unique index), a row that would duplicate it inserts nothing and the
    answer is False; no savepoint is needed, so the transaction stays usable. `also` is an UPDATE that goes
    with the insert (a chain head moved on): on PostgreSQL in the same statement.
    """
    sql, params = _insert_sql(instance, on_conflict)
    if also is not None and connection.vendor != "postgresql":
        _run(*also)
    elif also is not None:
        sql, params = f"WITH also AS ({also[0]}) {sql}", [*also[1], *params]
    with cursor() as c:
        c.execute(sql, params)
        return _inserted(instance, c.fetchone())


def insert_checking(instance: models.Model, check: Also) -> bool:
    """`insert(instance)`, and `check` (a boolean expression, the callers' own text) evaluated in the same statement,
    after the row is in: its answer. PostgreSQL only (a data-modifying WITH)."""
    assert connection.vendor == "postgresql", "insert_checking needs a data-modifying WITH"
    sql, params = _insert_sql(instance, "")
    pk = instance._meta.pk.column
    sql = f'WITH ins AS ({sql}) SELECT ins."{pk}", {check[0]} FROM ins'  # noqa: S608 - identifiers from the models
    with cursor() as c:
        c.execute(sql, [*params, *check[1]])
        row = c.fetchone()
    _inserted(instance, row)
    return bool(row and row[1])


def update_and_insert(
    changed: models.Model, names: Sequence[str], new: models.Model, *, also: Also | None = None
) -> None:
    """`update(changed, names)`, then `insert(new)` (and `also`): on PostgreSQL one statement (a data-modifying
    WITH), so a transition's change and its event cost one round trip."""
    if connection.vendor != "postgresql":
        update(changed, names)
        insert(new, also=also)
        return
    update_sql, update_params = _update_sql(changed, names)
    insert_sql, insert_params = _insert_sql(new, "")
    extra, extra_params = (f", also AS ({also[0]})", list(also[1])) if also is not None else ("", [])
    with cursor() as c:
        c.execute(
            f"WITH changed AS ({update_sql}){extra} {insert_sql}", [*update_params, *extra_params, *insert_params]
        )
        _inserted(new, c.fetchone())
