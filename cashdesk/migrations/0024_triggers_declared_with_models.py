"""The books' guards are declared with their models (casino_office.triggers) and installed from here.

PostgreSQL: the hand-written triggers the historical migrations installed are dropped first; unapplied, this
migration writes them back. The SQL below was compiled from the declarations by makemigrations and is frozen.
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from casino_office.migrations._frozen import (
    close_pgtrigger_ignore,
    BALANCED_LEGS,
    CASH_PAYOUT_IS_CASHABLE,
    REGISTER_ENTRY_TRIGGER,
    REQUIRE_REGISTER_ENTRY,
    retire_hand_written,
)


def restore(schema_editor):
    """The books' guards as cashdesk 0009 and 0015 (and compliance 0002) wrote them."""
    for sql in (BALANCED_LEGS, REQUIRE_REGISTER_ENTRY, REGISTER_ENTRY_TRIGGER, CASH_PAYOUT_IS_CASHABLE):
        schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):

    dependencies = [
        ('cashdesk', '0023_places_moved_to_machines'),
    ]

    operations = [
        retire_hand_written(
            append_only_tables=(
                "cashdesk_cashtransaction",
                "cashdesk_leg",
                "cashdesk_shiftcountline",
                "cashdesk_checkcodefailure",
                "cashdesk_checkcodeunlock",
            ),
            triggers=(
                ("cashdesk_leg_balanced_trg", "cashdesk_leg", "cashdesk_leg_balanced"),
                (
                    "cashdesk_tx_requires_register_entry_trg",
                    "cashdesk_cashtransaction",
                    "cashdesk_tx_requires_register_entry",
                ),
                ("cashdesk_cash_payout_is_cashable_trg", "cashdesk_cashtransaction", "cashdesk_cash_payout_is_cashable"),
            ),
            restore=restore,
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='c15b96893ed4df806080b24a98de7d6f8f9b37fb', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_1a591', table='cashdesk_cashtransaction', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='50839b18b96bf38c6e13adbf2786378fa30d3555', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_50633', table='cashdesk_cashtransaction', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='requires_register_entry', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', func="\n                IF NEW.kind IN ('ticket_payout', 'receipt_payout', 'smartcard_payout', 'chips_cashout', 'chips_buy', 'ticket_sale', 'tokens_buy', 'tokens_cashout', 'smartcard_load', 'kiosk_payout')\n                   AND NEW.amount > NEW.identity_threshold\n                   AND NOT EXISTS (SELECT 1 FROM compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN\n                    RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry',\n                        NEW.id USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NULL;\n                ", hash='fbee034ef44c0134052ee035b997be400963160d', operation='INSERT', pgid='pgtrigger_requires_register_entry_399dd', table='cashdesk_cashtransaction', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='cash_payout_is_cashable', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (NEW."kind" IN (\'ticket_payout\', \'kiosk_payout\'))', func="\n                IF EXISTS (\n                    SELECT 1 FROM tickets_ticket t WHERE t.id = NEW.ticket_id AND t.ticket_type <> 'cashable'\n                ) THEN\n                    RAISE EXCEPTION 'cash transaction % pays a promotional ticket in cash', NEW.id\n                        USING ERRCODE = 'check_violation';\n                END IF;\n                RETURN NEW;\n                ", hash='78965ac3a4b3c4ac077a97788d0297fe846c8a5a', operation='INSERT', pgid='pgtrigger_cash_payout_is_cashable_22f3d', table='cashdesk_cashtransaction', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='checkcodefailure',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='0dbf42a0d3c07a0b9e3bc5aedbc0651d6c8f8a1e', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_3afaf', table='cashdesk_checkcodefailure', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='checkcodefailure',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='6f8e76d6bb99b1f0ffd522adcbce367567a98ed9', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_ec65f', table='cashdesk_checkcodefailure', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='checkcodeunlock',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='423b6ac2bb55869b9cf94f26cb6a9ce07938fb4a', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_f5405', table='cashdesk_checkcodeunlock', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='checkcodeunlock',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='5eb7056663545931068af602e7ca5c7f2731a17a', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_5b6f0', table='cashdesk_checkcodeunlock', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='leg',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='a32865211805f52548582ef2c2bb4f3bdb555482', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_f0c2e', table='cashdesk_leg', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='leg',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='cb0e1eab98d7bb6f3fda19529ae1be49c37f82f9', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_3a134', table='cashdesk_leg', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='leg',
            trigger=pgtrigger.compiler.Trigger(name='balanced', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', declare='DECLARE unbalanced record;', func="\n                SELECT item, SUM(amount) AS total, SUM(COALESCE(count, 0)) AS pieces INTO unbalanced\n                FROM cashdesk_leg WHERE transaction_id = NEW.transaction_id\n                GROUP BY item HAVING SUM(amount) <> 0 OR SUM(COALESCE(count, 0)) <> 0 LIMIT 1;\n                IF FOUND THEN\n                    RAISE EXCEPTION 'transaction % is unbalanced in %: its legs sum to %', NEW.transaction_id,\n                        unbalanced.item, unbalanced.total USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NULL;\n                ", hash='66d39b3bb079675b7782b33db1835d20162a6ad3', operation='INSERT', pgid='pgtrigger_balanced_e460e', table='cashdesk_leg', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='shiftcountline',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='edda090448f48fd568f055a3b1f4d1115f611058', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_76692', table='cashdesk_shiftcountline', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='shiftcountline',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='9bc7e625ebd83e54f641c2d650ce8a35ad75efe9', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_e9702', table='cashdesk_shiftcountline', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
