"""A redeemed, void or expired ticket never changes state again, whatever writes to the database.

The services never move a ticket out of these states (tickets.models.FINAL_STATES;
no path leads out of `expired` either: a ticket past expiry is not paid, and
an expired ticket is not reinstated). Ticket events refuse TRUNCATE.
"""

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

from casino_office.migrations._frozen import refuse_truncate

# Keep in step with tickets.models.FINAL_STATES, plus `expired`.
NEVER_LEAVE = "('redeemed', 'void', 'expired')"

POSTGRESQL = [
    f"""
    CREATE OR REPLACE FUNCTION tickets_ticket_final_state() RETURNS trigger AS $$
    BEGIN
        IF OLD.state IN {NEVER_LEAVE} AND NEW.state IS DISTINCT FROM OLD.state THEN
            RAISE EXCEPTION 'ticket % is %: it never changes state again', OLD.id, OLD.state
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    "CREATE TRIGGER tickets_ticket_final_state_trg BEFORE UPDATE OF state ON tickets_ticket "
    "FOR EACH ROW EXECUTE FUNCTION tickets_ticket_final_state();",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS tickets_ticket_final_state_trg ON tickets_ticket;",
    "DROP FUNCTION IF EXISTS tickets_ticket_final_state();",
]
SQLITE = [
    "CREATE TRIGGER tickets_ticket_final_state BEFORE UPDATE OF state ON tickets_ticket "
    f"WHEN OLD.state IN {NEVER_LEAVE} AND NEW.state IS NOT OLD.state "
    "BEGIN SELECT RAISE(ABORT, 'a ticket that is redeemed, void or expired never changes state again'); END;",
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS tickets_ticket_final_state;"]


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    for sql in POSTGRESQL if schema_editor.connection.vendor == "postgresql" else SQLITE:
        schema_editor.execute(sql, params=None)


def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    for sql in POSTGRESQL_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP:
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("tickets", "0006_money_core")]

    operations = [
        migrations.RunPython(forward, backward, elidable=False),
        refuse_truncate("tickets_ticketevent"),
    ]
