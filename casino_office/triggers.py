"""The database's own guards, declared with the models they guard (django-pgtrigger).

A model lists its triggers in `Meta.triggers`; `makemigrations` compiles them
to SQL and freezes that SQL in the migration that installs them, so a
migration never imports this module and a change here shows as a new
migration. tests/test_triggers.py checks that the installed triggers are
exactly the declared ones. A trigger's SQL names its tables with the schema
(`public.cashdesk_leg`), so a session's temporary table of the same name
cannot stand in for them. PostgreSQL only: the demo's SQLite keeps what its
historical migrations wrote, and earlier table rebuilds there dropped the
append-only triggers of the books, the register and the ticket events.

pgtrigger lets a session skip a trigger by naming it in the setting
`pgtrigger.ignore`, which any role may set. Nothing here uses that, and an
append-only table must not be open to whoever can set a session variable, so
every migration that installs triggers ends by making the check behind it
answer "never" (casino_office.migrations._frozen.close_pgtrigger_ignore, in the
same transaction; tests/test_triggers.py holds every such migration to it), and
`close_ignore` does it again after every `migrate` (casino_office.apps).
"""

from typing import Any

import pgtrigger
from django.db import connections

APPEND_ONLY_REFUSAL = (
    "RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP "
    "USING ERRCODE = 'integrity_constraint_violation';"
)


def append_only() -> list[pgtrigger.Trigger]:
    """UPDATE and DELETE of a row, and TRUNCATE of the table, are refused, whatever client sends them."""
    return [
        pgtrigger.Trigger(
            name="append_only",
            when=pgtrigger.Before,
            operation=pgtrigger.Update | pgtrigger.Delete,
            func=APPEND_ONLY_REFUSAL,
        ),
        pgtrigger.Trigger(
            name="no_truncate",
            level=pgtrigger.Statement,
            when=pgtrigger.Before,
            operation=pgtrigger.Truncate,
            func=APPEND_ONLY_REFUSAL,
        ),
    ]


def sql_list(values: list[str]) -> str:
    """A list of the vocabulary's values as SQL literals; only for values of the code's own tables."""
    return ", ".join("'{}'".format(value.replace("'", "''")) for value in values)


# pgtrigger's check of `pgtrigger.ignore`, replaced by one that never skips a trigger.
NEVER_IGNORE = """
CREATE OR REPLACE FUNCTION "public"._pgtrigger_should_ignore(trigger_name NAME) RETURNS BOOLEAN AS $$
BEGIN
    RETURN FALSE;
END;
$$ LANGUAGE plpgsql;
"""


def close_ignore(*, using: str = "default", **kwargs: Any) -> None:
    """After migrate: no session may skip a trigger by setting `pgtrigger.ignore` (see the module's note)."""
    connection = connections[using]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(NEVER_IGNORE)
