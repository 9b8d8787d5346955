"""The triggers name their tables with the schema (public.): a temporary table of the same name, which comes first
in a session's search path, can no longer stand in for the real one in a guard's check."""

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

from casino_office.migrations._frozen import close_pgtrigger_ignore


class Migration(migrations.Migration):

    dependencies = [
        ('cashdesk', '0025_kind_lists_from_one_table'),
    ]

    operations = [
        pgtrigger.migrations.RemoveTrigger(
            model_name='cashtransaction',
            name='requires_register_entry',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='cashtransaction',
            name='cash_payout_is_cashable',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='leg',
            name='balanced',
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='requires_register_entry', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', func="\n        IF NEW.kind IN ('ticket_payout', 'ticket_sale', 'chips_buy', 'chips_cashout', 'tokens_buy', 'tokens_cashout', 'smartcard_payout', 'smartcard_load', 'receipt_payout', 'kiosk_payout')\n           AND NEW.amount > NEW.identity_threshold\n           AND NOT EXISTS (SELECT 1 FROM public.compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN\n            RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry',\n                NEW.id USING ERRCODE = 'integrity_constraint_violation';\n        END IF;\n        RETURN NULL;\n        ", hash='ac33b18be36e3cf6a0c5ac2b0e6e85367a8fd9ed', operation='INSERT', pgid='pgtrigger_requires_register_entry_399dd', table='cashdesk_cashtransaction', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='cash_payout_is_cashable', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (NEW."kind" IN (\'ticket_payout\', \'kiosk_payout\'))', func="\n        IF EXISTS (\n            SELECT 1 FROM public.tickets_ticket t WHERE t.id = NEW.ticket_id AND t.ticket_type <> 'cashable'\n        ) THEN\n            RAISE EXCEPTION 'cash transaction % pays a promotional ticket in cash', NEW.id\n                USING ERRCODE = 'check_violation';\n        END IF;\n        RETURN NEW;\n        ", hash='24666a5e6f175a30cd464e989ccef4536e1323ed', operation='INSERT', pgid='pgtrigger_cash_payout_is_cashable_22f3d', table='cashdesk_cashtransaction', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='leg',
            trigger=pgtrigger.compiler.Trigger(name='balanced', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', declare='DECLARE unbalanced record;', func="\n                SELECT item, SUM(amount) AS total, SUM(COALESCE(count, 0)) AS pieces INTO unbalanced\n                FROM public.cashdesk_leg WHERE transaction_id = NEW.transaction_id\n                GROUP BY item HAVING SUM(amount) <> 0 OR SUM(COALESCE(count, 0)) <> 0 LIMIT 1;\n                IF FOUND THEN\n                    RAISE EXCEPTION 'transaction % is unbalanced in %: its legs sum to %', NEW.transaction_id,\n                        unbalanced.item, unbalanced.total USING ERRCODE = 'integrity_constraint_violation';\n                END IF;\n                RETURN NULL;\n                ", hash='4e85a253668c61171d2e04ee0f611f4e56b62a9d', operation='INSERT', pgid='pgtrigger_balanced_e460e', table='cashdesk_leg', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
        close_pgtrigger_ignore(),
    ]
