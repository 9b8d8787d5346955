"""Database triggers that make a table append-only: UPDATE, DELETE and TRUNCATE are refused.

`append_only(table)` refuses UPDATE and DELETE (a row trigger) and TRUNCATE
(a statement trigger; PostgreSQL only, SQLite has no TRUNCATE). The tables
made append-only before it refused TRUNCATE got the statement trigger from a
later migration, `refuse_truncate(table)`; tests/test_append_only.py finds any
table that refuses UPDATE and DELETE but not TRUNCATE.
The application's role cannot TRUNCATE anyway (scripts/db-roles); the trigger
also stops the tables' owner from doing it by mistake. A superuser can still switch triggers off
(`session_replication_role = replica`), as the test suite's flush does
(tests/conftest.py): the register's keyed chain and its anchors outside the
database are what catch that (compliance.services.anchors).

Used by migrations for audit tables (ticket events, the books, the register).
The rule holds for any client of the database, not just the ORM.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _postgresql(table: str) -> tuple[list[str], list[str]]:
    function = f"{table}_append_only"
    create = [
        f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
        BEGIN
            RAISE EXCEPTION '{table} is append-only: % refused', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$ LANGUAGE plpgsql;
        """,
        f"CREATE TRIGGER {function}_trg BEFORE UPDATE OR DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {function}();",
    ]
    drop = [
        f"DROP TRIGGER IF EXISTS {function}_trg ON {table};",
        f"DROP FUNCTION IF EXISTS {function}();",
    ]
    return create, drop


def _sqlite(table: str) -> tuple[list[str], list[str]]:
    create = [
        f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: UPDATE refused'); END;",
        f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
        f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: DELETE refused'); END;",
    ]
    drop = [f"DROP TRIGGER IF EXISTS {table}_no_update;", f"DROP TRIGGER IF EXISTS {table}_no_delete;"]
    return create, drop


def _statements(vendor: str, table: str) -> tuple[list[str], list[str]]:
    if vendor == "postgresql":
        return _postgresql(table)
    if vendor == "sqlite":
        return _sqlite(table)
    raise NotImplementedError(f"append-only triggers are not written for {vendor}")


def append_only(table: str) -> migrations.RunPython:
    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        vendor = schema_editor.connection.vendor
        for sql in _statements(vendor, table)[0] + _truncate_statements(vendor, table)[0]:
            schema_editor.execute(sql, params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        vendor = schema_editor.connection.vendor
        for sql in _truncate_statements(vendor, table)[1] + _statements(vendor, table)[1]:
            schema_editor.execute(sql, params=None)

    return migrations.RunPython(forward, backward, elidable=False)


def _truncate_statements(vendor: str, table: str) -> tuple[list[str], list[str]]:
    if vendor == "sqlite":
        return [], []
    if vendor != "postgresql":
        raise NotImplementedError(f"append-only triggers are not written for {vendor}")
    function = f"{table}_no_truncate"
    create = [
        f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger AS $$
        BEGIN
            RAISE EXCEPTION '{table} is append-only: TRUNCATE refused'
                USING ERRCODE = 'integrity_constraint_violation';
        END;
        $$ LANGUAGE plpgsql;
        """,
        # Idempotent: a table made append-only since TRUNCATE was refused has the trigger already.
        f"DROP TRIGGER IF EXISTS {function}_trg ON {table};",
        f"CREATE TRIGGER {function}_trg BEFORE TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
    ]
    drop = [
        f"DROP TRIGGER IF EXISTS {function}_trg ON {table};",
        f"DROP FUNCTION IF EXISTS {function}();",
    ]
    return create, drop


def refuse_truncate(table: str) -> migrations.RunPython:
    """For a table made append-only before `append_only` refused TRUNCATE too."""

    def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for sql in _truncate_statements(schema_editor.connection.vendor, table)[0]:
            schema_editor.execute(sql, params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for sql in _truncate_statements(schema_editor.connection.vendor, table)[1]:
            schema_editor.execute(sql, params=None)

    return migrations.RunPython(forward, backward, elidable=False)


def rewrite_on_downgrade(table: str, sql: str) -> migrations.RunPython:
    """A migration step that does nothing forward and, when the migration is unapplied, runs `sql` on an
    append-only `table` with its row triggers lifted for that statement alone: for a downgrade whose older
    schema cannot hold a value the newer code wrote (a kind the older constraint does not know)."""

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        create, drop = _statements(schema_editor.connection.vendor, table)
        for statement in [*drop, sql, *create]:
            schema_editor.execute(statement, params=None)

    return migrations.RunPython(migrations.RunPython.noop, backward, elidable=False)
