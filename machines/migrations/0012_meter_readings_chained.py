"""The machines' meter readings become a chained journal (issue 23) and append-only at the database: each reading's
MAC covers its meters and the previous reading's MAC, per casino. The readings written before are chained here, in the
order they were written (REGISTER_CHAIN_KEYS must be set when this runs); then the chain columns are required."""

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

from casino_office.migrations._frozen import close_pgtrigger_ignore
from machines.migrations._chain_backfill import chain_backfill

METERS = (
    "ticket_out_count",
    "ticket_in_count",
    "handpay_count",
    "games_played",
    "attendant_paid_count",
    "ticket_out_amount",
    "ticket_in_amount",
    "handpay_amount",
    "bills_in_amount",
    "coin_in_amount",
    "coin_out_amount",
    "cash_dispensed_amount",
    "attendant_paid_amount",
)
FIELDS = ("machine_id", "read_at", "received_at", "request_id", "reset", *METERS)


class Migration(migrations.Migration):

    dependencies = [
        ('machines', '0011_chain_heads'),
    ]

    operations = [
        migrations.AddField(
            model_name='meterreading',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AddField(
            model_name='meterreading',
            name='chain_key',
            field=models.CharField(default='', editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AddField(
            model_name='meterreading',
            name='chain_mac',
            field=models.CharField(default='', editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AddField(
            model_name='meterreading',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, null=True, verbose_name='chain sequence'),
        ),
        chain_backfill(
            "machines", "MeterReading", journal="meter_readings", casino="machine__casino_id", fields=FIELDS
        ),
        migrations.AlterField(
            model_name='meterreading',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AlterField(
            model_name='meterreading',
            name='chain_key',
            field=models.CharField(editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AlterField(
            model_name='meterreading',
            name='chain_mac',
            field=models.CharField(editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AlterField(
            model_name='meterreading',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, verbose_name='chain sequence'),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='meterreading',
            trigger=pgtrigger.compiler.Trigger(name='append_only', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='eddb5a754ec1bd122c2b4665bf4433b9fc49fd92', operation='UPDATE OR DELETE', pgid='pgtrigger_append_only_1286e', table='machines_meterreading', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='meterreading',
            trigger=pgtrigger.compiler.Trigger(name='no_truncate', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'integrity_constraint_violation';", hash='f87e6d546f84906f9a77d44cfad50cdcb5295ffe', level='STATEMENT', operation='TRUNCATE', pgid='pgtrigger_no_truncate_1ca35', table='machines_meterreading', when='BEFORE')),
        ),
        migrations.AddConstraint(
            model_name='meterreading',
            constraint=models.UniqueConstraint(fields=('chain', 'chain_sequence'), name='meterreading_one_per_chain_link'),
        ),
        close_pgtrigger_ignore(),
    ]
