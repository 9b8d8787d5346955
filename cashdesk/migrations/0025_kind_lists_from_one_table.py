"""The kind lists of the books' constraints and triggers come from one table (casino_office.vocabulary).

The constraints list the same kinds in the table's order: state only. The triggers are compiled again with the
kinds in that order (the same meaning; pgtrigger replaces them).
"""

import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models

from casino_office.migrations._frozen import close_pgtrigger_ignore


class Migration(migrations.Migration):

    dependencies = [
        ('cashdesk', '0024_triggers_declared_with_models'),
        ('compliance', '0011_triggers_declared_with_models'),
        ('machines', '0010_place_at_the_bottom'),
        ('tickets', '0013_triggers_declared_with_models'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The same conditions with the kinds in the table's order: the database's constraints mean the same.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name='cashtransaction',
                    name='cashtx_approver_is_not_creator',
                ),
                migrations.RemoveConstraint(
                    model_name='cashtransaction',
                    name='cashtx_identity_over_threshold',
                ),
                migrations.AddConstraint(
                    model_name='cashtransaction',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind__in', ['ticket_payout', 'ticket_sale', 'chips_buy', 'chips_cashout', 'tokens_buy', 'tokens_cashout', 'smartcard_payout', 'smartcard_load', 'receipt_payout', 'kiosk_payout']), _negated=True), ('amount__lte', models.F('identity_threshold')), ('person__isnull', False), _connector='OR'), name='cashtx_identity_over_threshold'),
                ),
                migrations.AddConstraint(
                    model_name='cashtransaction',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind__in', ['drop', 'fill', 'reversal']), _negated=True), models.Q(('approved_by', models.F('created_by')), _negated=True), _connector='OR'), name='cashtx_approver_is_not_creator'),
                ),
            ],
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='cashtransaction',
            name='requires_register_entry',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='cashtransaction',
            name='cash_payout_is_cashable',
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='requires_register_entry', sql=pgtrigger.compiler.UpsertTriggerSql(constraint='CONSTRAINT', func="\n        IF NEW.kind IN ('ticket_payout', 'ticket_sale', 'chips_buy', 'chips_cashout', 'tokens_buy', 'tokens_cashout', 'smartcard_payout', 'smartcard_load', 'receipt_payout', 'kiosk_payout')\n           AND NEW.amount > NEW.identity_threshold\n           AND NOT EXISTS (SELECT 1 FROM compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN\n            RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry',\n                NEW.id USING ERRCODE = 'integrity_constraint_violation';\n        END IF;\n        RETURN NULL;\n        ", hash='aca1493c3634faf2e68e3bcfb69d246eddb38741', operation='INSERT', pgid='pgtrigger_requires_register_entry_399dd', table='cashdesk_cashtransaction', timing='DEFERRABLE INITIALLY DEFERRED', when='AFTER')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='cashtransaction',
            trigger=pgtrigger.compiler.Trigger(name='cash_payout_is_cashable', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (NEW."kind" IN (\'ticket_payout\', \'kiosk_payout\'))', func="\n        IF EXISTS (\n            SELECT 1 FROM tickets_ticket t WHERE t.id = NEW.ticket_id AND t.ticket_type <> 'cashable'\n        ) THEN\n            RAISE EXCEPTION 'cash transaction % pays a promotional ticket in cash', NEW.id\n                USING ERRCODE = 'check_violation';\n        END IF;\n        RETURN NEW;\n        ", hash='4d44c946af9a505c93f0a991c13e9456a70f9a5e', operation='INSERT', pgid='pgtrigger_cash_payout_is_cashable_22f3d', table='cashdesk_cashtransaction', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
