"""The register's kinds come from the desk's table of kinds (casino_office.vocabulary), with its labels and order.

Only the state changes: the labels are choices (not in the database), and the
check constraint lists the same kinds in another order (the order of an IN list
changes nothing, so the database keeps it as it is).
"""

from django.db import migrations, models

REGISTER_KINDS = [
    ("ticket_payout", "Ticket payout"),
    ("ticket_sale", "Ticket sale"),
    ("chips_buy", "Cash for chips"),
    ("chips_cashout", "Chips for cash"),
    ("tokens_buy", "Cash for tokens"),
    ("tokens_cashout", "Tokens for cash"),
    ("smartcard_payout", "Smart card payout"),
    ("smartcard_load", "Cash onto a smart card"),
    ("receipt_payout", "Machine receipt payout"),
]


class Migration(migrations.Migration):
    dependencies = [("compliance", "0010_register_keeps_desk_ids_as_values")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(model_name="registerentry", name="register_kind_valid"),
                migrations.AlterField(
                    model_name="registerentry",
                    name="kind",
                    field=models.CharField(choices=REGISTER_KINDS, max_length=20, verbose_name="kind"),
                ),
                migrations.AddConstraint(
                    model_name="registerentry",
                    constraint=models.CheckConstraint(
                        condition=models.Q(("kind__in", [value for value, _label in REGISTER_KINDS])),
                        name="register_kind_valid",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
