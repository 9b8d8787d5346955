"""The tickets' guards are declared with their models (casino_office.triggers) and installed from here.

PostgreSQL: the hand-written triggers the historical migrations installed are dropped first; unapplied, this
migration writes them back. The SQL below was compiled from the declarations by makemigrations and is frozen.
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations
import importlib

from casino_office.migrations._frozen import retire_hand_written, close_pgtrigger_ignore


def restore(schema_editor):
    """The ticket guards as tickets 0007, 0009 and 0011 wrote them (the event log's are restored by the helper)."""
    for name in ("0007_final_states_and_no_truncate", "0009_voucher_prints_and_fixed_identity", "0011_reservednumber_fixed"):
        for sql in importlib.import_module(f"tickets.migrations.{name}").POSTGRESQL:
            schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('tickets', '0012_issuing_desk_is_a_place'),
    ]

    operations = [
        retire_hand_written(
            append_only_tables=("tickets_ticketevent",),
            triggers=(
                ("tickets_ticket_final_state_trg", "tickets_ticket", "tickets_ticket_final_state"),
                ("tickets_ticket_fixed_identity_trg", "tickets_ticket", "tickets_ticket_fixed_identity"),
                ("tickets_reservednumber_fixed_trg", "tickets_reservednumber", "tickets_reservednumber_fixed"),
            ),
            restore=restore,
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='reservednumber',
            trigger=pgtrigger.compiler.Trigger(name='fixed', sql=pgtrigger.compiler.UpsertTriggerSql(func="\n                IF NEW.validation_number IS DISTINCT FROM OLD.validation_number\n                   OR NEW.casino_id IS DISTINCT FROM OLD.casino_id\n                   OR NEW.machine_id IS DISTINCT FROM OLD.machine_id\n                   OR NEW.reserved_at IS DISTINCT FROM OLD.reserved_at THEN\n                    RAISE EXCEPTION 'reserved number %: its number, casino, machine and time never change', OLD.id\n                        USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                IF OLD.ticket_id IS NOT NULL AND (\n                   NEW.ticket_id IS DISTINCT FROM OLD.ticket_id\n                   OR NEW.reported_at IS DISTINCT FROM OLD.reported_at\n                   OR NEW.reported_sequence IS DISTINCT FROM OLD.reported_sequence) THEN\n                    RAISE EXCEPTION 'reserved number % was reported: it never changes again', OLD.id\n                        USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                IF NEW.ticket_id IS NOT NULL AND NOT EXISTS (\n                    SELECT 1 FROM tickets_ticket t\n                    WHERE t.id = NEW.ticket_id AND t.validation_number = NEW.validation_number\n                      AND t.casino_id = NEW.casino_id AND t.issuing_machine_id = NEW.machine_id) THEN\n                    RAISE EXCEPTION 'reserved number % can only be reported as its machine''s ticket of that number',\n                        OLD.id USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NEW;\n                ", hash='5ac3e88f698060027d97a27242159724b44bf75d', operation='UPDATE', pgid='pgtrigger_fixed_be12a', table='tickets_reservednumber', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='ticket',
            trigger=pgtrigger.compiler.Trigger(name='final_state', sql=pgtrigger.compiler.UpsertTriggerSql(func="\n                IF OLD.state IN ('redeemed', 'void', 'expired') AND NEW.state IS DISTINCT FROM OLD.state THEN\n                    RAISE EXCEPTION 'ticket % is %: it never changes state again', OLD.id, OLD.state\n                        USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NEW;\n                ", hash='0f02c16ff663a8e51d9763a3a42e23b2e4950568', operation='UPDATE OF "state"', pgid='pgtrigger_final_state_04616', table='tickets_ticket', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='ticket',
            trigger=pgtrigger.compiler.Trigger(name='fixed_identity', sql=pgtrigger.compiler.UpsertTriggerSql(func="\n                IF NEW.validation_number IS DISTINCT FROM OLD.validation_number\n                   OR NEW.amount IS DISTINCT FROM OLD.amount\n                   OR NEW.casino_id IS DISTINCT FROM OLD.casino_id THEN\n                    RAISE EXCEPTION 'ticket %: its number, amount and casino never change', OLD.id\n                        USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NEW;\n                ", hash='4f4e766291f110237ac7475c590040a08cb64524', operation='UPDATE OF "validation_number", "amount", "casino_id"', pgid='pgtrigger_fixed_identity_513e7', table='tickets_ticket', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='ticketevent',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='01e83c2f602ef257357ef04e3c04be9b06c1a49d', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_2f517', table='tickets_ticketevent', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='ticketevent',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='ea86168aa5523defd402e023d2e9f4b75638bd3b', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_f41fa', table='tickets_ticketevent', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
