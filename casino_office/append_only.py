"""Database triggers that make a table append-only: UPDATE and DELETE are refused.

TRUNCATE is left to database privileges (the application's role should not
own the tables in production; see docs/): the test suite's flush needs it.

Used by migrations for audit tables (ticket events, and later the ledger and
the register). The rule holds for any client of the database, not just the ORM.
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
        for sql in _statements(schema_editor.connection.vendor, table)[0]:
            schema_editor.execute(sql, params=None)

    def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
        for sql in _statements(schema_editor.connection.vendor, table)[1]:
            schema_editor.execute(sql, params=None)

    return migrations.RunPython(forward, backward, elidable=False)
