"""A place that holds value (desk, vault, kiosk) moves below every app: the model is the casino's, the table stays.

State only: the table `cashdesk_cashdesk` keeps its name, rows, constraints and the foreign keys into it.
"""

import django.db.models.deletion
from decimal import Decimal
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('machines', '0009_meter_attendant_paid_credits'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Place',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('kind', models.CharField(choices=[('desk', 'Cash desk'), ('vault', 'Vault'), ('kiosk', 'Kiosk')], default='desk', max_length=8, verbose_name='kind')),
                        ('code', models.CharField(max_length=16, verbose_name='code')),
                        ('name', models.CharField(max_length=64, verbose_name='name')),
                        ('cash_limit', models.DecimalField(decimal_places=2, default=Decimal('50000.00'), help_text='Cash above this goes to the vault.', max_digits=12, verbose_name='cash limit')),
                        ('cash_limit_enforced', models.BooleanField(default=True, help_text='Refuse cash coming in above the limit; otherwise only warn.', verbose_name='cash limit enforced')),
                        ('last_receipt_number', models.PositiveIntegerField(default=0, editable=False, verbose_name='last receipt number')),
                        ('last_ticket_sequence', models.PositiveIntegerField(default=0, editable=False, verbose_name='last ticket sequence')),
                        ('casino', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='places', to='machines.casino', verbose_name='casino')),
                        ('machine', models.OneToOneField(blank=True, help_text='The kiosk whose cash this is.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='cash_place', to='machines.machine', verbose_name='kiosk')),
                    ],
                    options={
                        'verbose_name': 'place',
                        'verbose_name_plural': 'places',
                        'db_table': 'cashdesk_cashdesk',
                        'ordering': ['casino', 'code'],
                        'constraints': [models.UniqueConstraint(fields=('casino', 'code'), name='cashdesk_code_unique_per_casino'), models.UniqueConstraint(condition=models.Q(('kind', 'vault')), fields=('casino',), name='cashdesk_one_vault_per_casino'), models.CheckConstraint(condition=models.Q(('kind__in', ['desk', 'vault', 'kiosk'])), name='cashdesk_kind_valid'), models.CheckConstraint(condition=models.Q(models.Q(('kind', 'kiosk'), ('machine__isnull', False)), models.Q(models.Q(('kind', 'kiosk'), _negated=True), ('machine__isnull', True)), _connector='OR'), name='cashdesk_kiosk_has_machine'), models.CheckConstraint(condition=models.Q(('cash_limit__gte', 0)), name='cashdesk_cash_limit_not_negative')],
                    },
                ),
            ],
        ),
    ]
