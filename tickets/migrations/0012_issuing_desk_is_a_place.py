"""A ticket's issuing desk points down, at the casino's places (state only: the table it points at is the same).
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('machines', '0010_place_at_the_bottom'),
        ('tickets', '0011_reservednumber_fixed'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='ticket',
                    name='issuing_desk',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='issued_tickets', to='machines.place', verbose_name='issuing desk'),
                ),
            ],
        ),
    ]
