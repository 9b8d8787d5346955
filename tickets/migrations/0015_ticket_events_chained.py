"""The tickets' events become a chained journal (issue 23): each event's MAC covers the event, the ticket's identity
and the previous event's MAC, per casino. The events written before are chained here, in the order they were
written (REGISTER_CHAIN_KEYS must be set when this runs); then the chain columns are required."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from machines.migrations._chain_backfill import chain_backfill

FIELDS = (
    "ticket_id",
    "kind",
    "from_state",
    "to_state",
    "machine_id",
    "user_id",
    "request_id",
    "reason",
    "details",
    "created_at",
    "ticket__validation_number",
    "ticket__casino_id",
    "ticket__issuing_machine_id",
    "ticket__issuing_desk_id",
    "ticket__sequence",
    "ticket__amount",
    "ticket__ticket_type",
    "ticket__issued_at",
    "ticket__expires_at",
)


class Migration(migrations.Migration):

    dependencies = [
        ('machines', '0011_chain_heads'),
        ('tickets', '0014_triggers_name_their_tables_schema'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='ticketevent',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AddField(
            model_name='ticketevent',
            name='chain_key',
            field=models.CharField(default='', editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AddField(
            model_name='ticketevent',
            name='chain_mac',
            field=models.CharField(default='', editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AddField(
            model_name='ticketevent',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, null=True, verbose_name='chain sequence'),
        ),
        chain_backfill("tickets", "TicketEvent", journal="ticket_events", casino="ticket__casino_id", fields=FIELDS),
        migrations.AlterField(
            model_name='ticketevent',
            name='chain',
            field=models.ForeignKey(db_index=False, editable=False, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='machines.chainhead', verbose_name='chain'),
        ),
        migrations.AlterField(
            model_name='ticketevent',
            name='chain_key',
            field=models.CharField(editable=False, max_length=8, verbose_name='chain key id'),
        ),
        migrations.AlterField(
            model_name='ticketevent',
            name='chain_mac',
            field=models.CharField(editable=False, max_length=64, verbose_name='chain MAC'),
        ),
        migrations.AlterField(
            model_name='ticketevent',
            name='chain_sequence',
            field=models.BigIntegerField(editable=False, verbose_name='chain sequence'),
        ),
        migrations.AddConstraint(
            model_name='ticketevent',
            constraint=models.UniqueConstraint(fields=('chain', 'chain_sequence'), name='ticketevent_one_per_chain_link'),
        ),
    ]
