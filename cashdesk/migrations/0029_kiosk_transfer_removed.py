"""One transfer model for every place (3 of 3): every transfer names its place, the kiosk's model and the count
request's link to it go, and the merged model's rules apply (the kiosk's, generalised: waiting, approved or
cancelled; a kiosk's drop may count nothing; one transfer waits per kiosk)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cashdesk', '0028_kiosk_transfers_into_transfers'),
        ('machines', '0010_place_at_the_bottom'),
    ]

    operations = [
        migrations.AlterField(
            model_name='transfer',
            name='place',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='transfers', to='machines.place', verbose_name='place'),
        ),
        migrations.RemoveField(
            model_name='countrequest',
            name='kiosk_transfer',
        ),
        migrations.DeleteModel(
            name='KioskTransfer',
        ),
        migrations.AddConstraint(
            model_name='transfer',
            constraint=models.CheckConstraint(condition=models.Q(('amount__gt', 0), models.Q(('amount', 0), ('direction', 'drop'), ('shift__isnull', True)), _connector='OR'), name='transfer_amount_valid'),
        ),
        migrations.AddConstraint(
            model_name='transfer',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('approved_at__isnull', True), ('approved_by__isnull', True), ('cancelled_at__isnull', True), ('cancelled_by__isnull', True), ('count__isnull', True), ('transaction__isnull', True)), models.Q(('approved_at__isnull', False), ('cancelled_at__isnull', True), ('cancelled_by__isnull', True), ('count__isnull', True), ('shift__isnull', False), ('transaction__isnull', False)), models.Q(('approved_at__isnull', False), ('approved_by__isnull', False), ('cancelled_at__isnull', True), ('cancelled_by__isnull', True), ('count__isnull', True), ('direction', 'fill'), ('shift__isnull', True), ('transaction__isnull', False)), models.Q(('approved_at__isnull', False), ('approved_by__isnull', False), ('cancelled_at__isnull', True), ('cancelled_by__isnull', True), ('count__isnull', False), ('direction', 'drop'), ('shift__isnull', True)), models.Q(('approved_at__isnull', True), ('approved_by__isnull', True), ('cancelled_at__isnull', False), ('cancelled_by__isnull', False), ('count__isnull', True), ('transaction__isnull', True)), _connector='OR'), name='transfer_state_consistent'),
        ),
        migrations.AddConstraint(
            model_name='transfer',
            constraint=models.UniqueConstraint(condition=models.Q(('approved_at__isnull', True), ('cancelled_at__isnull', True), ('shift__isnull', True)), fields=('place',), name='transfer_one_waiting_per_kiosk'),
        ),
        migrations.AddConstraint(
            model_name='countrequest',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('kind', 'handover'), ('next_cashier__isnull', False), ('shift__isnull', False)), models.Q(('kind__in', ['opening', 'closing']), ('next_cashier__isnull', True), ('shift__isnull', False)), models.Q(('kind', 'vault'), ('next_cashier__isnull', True), ('shift__isnull', True)), models.Q(('kind', 'kiosk'), ('next_cashier__isnull', True), ('shift__isnull', True), ('transfer__isnull', False)), _connector='OR'), name='countrequest_kind_valid'),
        ),
    ]
