"""One transfer model for every place that trades with the vault (1 of 3): the desk's Transfer gets what a kiosk's
transfer has (its place, a shift only for a desk, the approval, the cancellation, a drop's count), and count
requests a link to it. Schema only: the rows move in 0028 and the kiosk's model goes in 0029, each migration in its
own transaction (PostgreSQL refuses ALTER TABLE on a table with rows changed in the same transaction while its
deferred foreign-key checks are pending)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('cashdesk', '0026_triggers_name_their_tables_schema'),
        ('machines', '0010_place_at_the_bottom'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # Both name the old shapes; 0029 adds them back for the merged model.
        migrations.RemoveConstraint(
            model_name='countrequest',
            name='countrequest_kind_valid',
        ),
        migrations.RemoveConstraint(
            model_name='transfer',
            name='transfer_amount_positive',
        ),
        migrations.AlterField(
            model_name='transfer',
            name='shift',
            field=models.ForeignKey(blank=True, help_text="The cashier's shift of a desk's transfer; none for a kiosk's.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='transfers', to='cashdesk.shift', verbose_name='shift'),
        ),
        migrations.AddField(
            model_name='transfer',
            name='place',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='transfers', to='machines.place', verbose_name='place'),
        ),
        migrations.AddField(
            model_name='transfer',
            name='count',
            field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='transfer', to='cashdesk.shiftcount', verbose_name='count'),
        ),
        migrations.AddField(
            model_name='transfer',
            name='approved_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='approved by'),
        ),
        migrations.AddField(
            model_name='transfer',
            name='approved_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='approved at'),
        ),
        migrations.AddField(
            model_name='transfer',
            name='cancelled_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='cancelled by'),
        ),
        migrations.AddField(
            model_name='transfer',
            name='cancelled_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='cancelled at'),
        ),
        migrations.AddField(
            model_name='countrequest',
            name='transfer',
            field=models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='count_request', to='cashdesk.transfer', verbose_name='kiosk drop'),
        ),
    ]
