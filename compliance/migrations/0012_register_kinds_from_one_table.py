"""The register's kinds come from one table (casino_office.vocabulary), with the transaction's labels.

State only: the check constraint lists the same kinds in the table's order.
"""

from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('compliance', '0011_triggers_declared_with_models'),
        ('machines', '0010_place_at_the_bottom'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # The same conditions with the kinds in the table's order: the database's constraints mean the same.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(
                    model_name='registerentry',
                    name='register_kind_valid',
                ),
                migrations.AlterField(
                    model_name='registerentry',
                    name='kind',
                    field=models.CharField(choices=[('ticket_payout', 'Ticket payout'), ('ticket_sale', 'Ticket sale'), ('chips_buy', 'Cash for chips'), ('chips_cashout', 'Chips for cash'), ('tokens_buy', 'Cash for tokens'), ('tokens_cashout', 'Tokens for cash'), ('smartcard_payout', 'Smart card payout'), ('smartcard_load', 'Cash onto a smart card'), ('receipt_payout', 'Machine receipt payout')], max_length=20, verbose_name='kind'),
                ),
                migrations.AddConstraint(
                    model_name='registerentry',
                    constraint=models.CheckConstraint(condition=models.Q(('kind__in', ['ticket_payout', 'ticket_sale', 'chips_buy', 'chips_cashout', 'tokens_buy', 'tokens_cashout', 'smartcard_payout', 'smartcard_load', 'receipt_payout'])), name='register_kind_valid'),
                ),
            ],
        ),
    ]
