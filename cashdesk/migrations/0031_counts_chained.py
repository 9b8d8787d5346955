"""The counts become a chained journal and append-only at the database (issue 23): each count's MAC covers its fields,
its lines and the previous count's MAC, per casino. The counts written before are chained here, in the order they were
written (REGISTER_CHAIN_KEYS must be set when this runs); then the chain columns are required."""

import django.db.models.deletion
from django.conf import settings
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

from casino_office.migrations._frozen import close_pgtrigger_ignore

from machines.migrations._chain_backfill import chain_backfill

FIELDS = ("desk_id", "shift_id", "kind", "counted_by_id", "counted_at", "transaction_id", "operation_key")
LINES = ("item", "counted_amount", "expected_amount", "variance")


class Migration(migrations.Migration):

    dependencies = [
        ('machines', '0011_chain_heads'),
        ('cashdesk', '0030_cash_transactions_chained'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='shiftcount',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AddField(
            model_name='shiftcount',
            name='chain_key',
            field=models.CharField(default='', editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AddField(
            model_name='shiftcount',
            name='chain_mac',
            field=models.CharField(default='', editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AddField(
            model_name='shiftcount',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, null=True, verbose_name='chain sequence'),
        ),
        chain_backfill(
            "cashdesk", "ShiftCount", journal="counts", casino="desk__casino_id", fields=FIELDS, children={"lines": LINES}
        ),
        migrations.AlterField(
            model_name='shiftcount',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AlterField(
            model_name='shiftcount',
            name='chain_key',
            field=models.CharField(editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AlterField(
            model_name='shiftcount',
            name='chain_mac',
            field=models.CharField(editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AlterField(
            model_name='shiftcount',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, verbose_name='chain sequence'),
        ),
        migrations.AddConstraint(
            model_name='shiftcount',
            constraint=models.UniqueConstraint(fields=('chain', 'chain_sequence'), name='shiftcount_one_per_chain_link'),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='shiftcount',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='9ff70e623babc6c6119a041719a529386bc0a427', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_de939', table='cashdesk_shiftcount', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='shiftcount',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='f05956e3f790d14eeda19888e06b4d838793c04e', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_c6a35', table='cashdesk_shiftcount', when='BEFORE')),
        ),
        close_pgtrigger_ignore(),
    ]
