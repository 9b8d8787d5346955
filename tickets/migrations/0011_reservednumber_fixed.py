from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

# A reserved number belongs to one machine of one casino for good, and is reported once, as the ticket of the
# same number: whatever writes to the database, a reported reservation never changes, and an outstanding one
# changes only by being reported.
POSTGRESQL = [
    """
    CREATE OR REPLACE FUNCTION tickets_reservednumber_fixed() RETURNS trigger AS $$
    BEGIN
        IF NEW.validation_number IS DISTINCT FROM OLD.validation_number
           OR NEW.casino_id IS DISTINCT FROM OLD.casino_id
           OR NEW.machine_id IS DISTINCT FROM OLD.machine_id
           OR NEW.reserved_at IS DISTINCT FROM OLD.reserved_at THEN
            RAISE EXCEPTION 'reserved number %: its number, casino, machine and time never change', OLD.id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF OLD.ticket_id IS NOT NULL AND (
           NEW.ticket_id IS DISTINCT FROM OLD.ticket_id
           OR NEW.reported_at IS DISTINCT FROM OLD.reported_at
           OR NEW.reported_sequence IS DISTINCT FROM OLD.reported_sequence) THEN
            RAISE EXCEPTION 'reserved number % was reported: it never changes again', OLD.id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF NEW.ticket_id IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM tickets_ticket t
            WHERE t.id = NEW.ticket_id AND t.validation_number = NEW.validation_number
              AND t.casino_id = NEW.casino_id AND t.issuing_machine_id = NEW.machine_id) THEN
            RAISE EXCEPTION 'reserved number % can only be reported as its machine''s ticket of that number', OLD.id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END;
    $$ LANGUAGE plpgsql;
    """,
    "CREATE TRIGGER tickets_reservednumber_fixed_trg BEFORE UPDATE ON tickets_reservednumber "
    "FOR EACH ROW EXECUTE FUNCTION tickets_reservednumber_fixed();",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS tickets_reservednumber_fixed_trg ON tickets_reservednumber;",
    "DROP FUNCTION IF EXISTS tickets_reservednumber_fixed();",
]
SQLITE = [
    "CREATE TRIGGER tickets_reservednumber_fixed BEFORE UPDATE ON tickets_reservednumber "
    "WHEN NEW.validation_number IS NOT OLD.validation_number OR NEW.casino_id IS NOT OLD.casino_id "
    "OR NEW.machine_id IS NOT OLD.machine_id OR NEW.reserved_at IS NOT OLD.reserved_at "
    "OR (OLD.ticket_id IS NOT NULL AND (NEW.ticket_id IS NOT OLD.ticket_id OR NEW.reported_at IS NOT OLD.reported_at "
    "OR NEW.reported_sequence IS NOT OLD.reported_sequence)) "
    "BEGIN SELECT RAISE(ABORT, 'a reserved number is fixed, and reported once'); END;",
]
SQLITE_DROP = ["DROP TRIGGER IF EXISTS tickets_reservednumber_fixed;"]


def forward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    for sql in POSTGRESQL if schema_editor.connection.vendor == "postgresql" else SQLITE:
        schema_editor.execute(sql, params=None)


def backward(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    for sql in POSTGRESQL_DROP if schema_editor.connection.vendor == "postgresql" else SQLITE_DROP:
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("tickets", "0010_offline_validation")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
