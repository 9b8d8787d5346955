"""The cash transactions become a chained journal (issue 23): each transaction's MAC covers its fields, its legs and
the previous transaction's MAC, per casino. The transactions written before are chained here, in the order they were
written (REGISTER_CHAIN_KEYS must be set when this runs); then the chain columns are required."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from machines.migrations._chain_backfill import chain_backfill

FIELDS = (
    "casino_id",
    "desk_id",
    "shift_id",
    "number",
    "kind",
    "amount",
    "person_id",
    "identity_threshold",
    "ticket_id",
    "reverses_id",
    "note",
    "created_by_id",
    "machine_id",
    "approved_by_id",
    "created_at",
    "machine_receipt_id",
    "operation_key",
)
LEGS = ("casino_id", "desk_id", "counterparty", "shift_id", "item", "count", "amount")


class Migration(migrations.Migration):

    dependencies = [
        ('machines', '0011_chain_heads'),
        ('cashdesk', '0029_kiosk_transfer_removed'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='cashtransaction',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AddField(
            model_name='cashtransaction',
            name='chain_key',
            field=models.CharField(default='', editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AddField(
            model_name='cashtransaction',
            name='chain_mac',
            field=models.CharField(default='', editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AddField(
            model_name='cashtransaction',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, null=True, verbose_name='chain sequence'),
        ),
        chain_backfill(
            "cashdesk", "CashTransaction", journal="cash_transactions", casino="casino_id", fields=FIELDS, children={"legs": LEGS}
        ),
        migrations.AlterField(
            model_name='cashtransaction',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AlterField(
            model_name='cashtransaction',
            name='chain_key',
            field=models.CharField(editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AlterField(
            model_name='cashtransaction',
            name='chain_mac',
            field=models.CharField(editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AlterField(
            model_name='cashtransaction',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, verbose_name='chain sequence'),
        ),
        migrations.AddConstraint(
            model_name='cashtransaction',
            constraint=models.UniqueConstraint(fields=('chain', 'chain_sequence'), name='cashtx_one_per_chain_link'),
        ),
    ]
