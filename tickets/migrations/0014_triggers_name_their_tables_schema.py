"""The triggers name their tables with the schema (public.): a temporary table of the same name, which comes first
in a session's search path, can no longer stand in for the real one in a guard's check."""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from casino_office.migrations._frozen import close_pgtrigger_ignore


class Migration(migrations.Migration):

    dependencies = [
        ('tickets', '0013_triggers_declared_with_models'),
    ]

    operations = [
        pgtrigger.migrations.RemoveTrigger(
            model_name='reservednumber',
            name='fixed',
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='reservednumber',
            trigger=pgtrigger.compiler.Trigger(name='fixed', sql=pgtrigger.compiler.UpsertTriggerSql(func="\n                IF NEW.validation_number IS DISTINCT FROM OLD.validation_number\n                   OR NEW.casino_id IS DISTINCT FROM OLD.casino_id\n                   OR NEW.machine_id IS DISTINCT FROM OLD.machine_id\n                   OR NEW.reserved_at IS DISTINCT FROM OLD.reserved_at THEN\n                    RAISE EXCEPTION 'reserved number %: its number, casino, machine and time never change', OLD.id\n                        USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                IF OLD.ticket_id IS NOT NULL AND (\n                   NEW.ticket_id IS DISTINCT FROM OLD.ticket_id\n                   OR NEW.reported_at IS DISTINCT FROM OLD.reported_at\n                   OR NEW.reported_sequence IS DISTINCT FROM OLD.reported_sequence) THEN\n                    RAISE EXCEPTION 'reserved number % was reported: it never changes again', OLD.id\n                        USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                IF NEW.ticket_id IS NOT NULL AND NOT EXISTS (\n                    SELECT 1 FROM public.tickets_ticket t\n                    WHERE t.id = NEW.ticket_id AND t.validation_number = NEW.validation_number\n                      AND t.casino_id = NEW.casino_id AND t.issuing_machine_id = NEW.machine_id) THEN\n                    RAISE EXCEPTION 'reserved number % can only be reported as its machine''s ticket of that number',\n                        OLD.id USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NEW;\n                ", hash='26649cce32257b62a4893edfa2c3553c37008b70', operation='UPDATE', pgid='pgtrigger_fixed_be12a', table='tickets_reservednumber', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
