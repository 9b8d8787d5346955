"""The kinds' lists come from one table (casino_office.vocabulary) and keep its order.

Two check constraints list the same kinds in another order: the state takes the
new order, the database keeps its constraints (the order of an IN list changes
nothing, so nothing is dropped, re-added or re-validated).
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("cashdesk", "0023_places_moved_to_machines")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(model_name="cashtransaction", name="cashtx_approver_is_not_creator"),
                migrations.RemoveConstraint(model_name="cashtransaction", name="cashtx_identity_over_threshold"),
                migrations.AddConstraint(
                    model_name="cashtransaction",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            models.Q(
                                (
                                    "kind__in",
                                    [
                                        "ticket_payout",
                                        "ticket_sale",
                                        "chips_buy",
                                        "chips_cashout",
                                        "tokens_buy",
                                        "tokens_cashout",
                                        "smartcard_payout",
                                        "smartcard_load",
                                        "receipt_payout",
                                        "kiosk_payout",
                                    ],
                                ),
                                _negated=True,
                            ),
                            ("amount__lte", models.F("identity_threshold")),
                            ("person__isnull", False),
                            _connector="OR",
                        ),
                        name="cashtx_identity_over_threshold",
                    ),
                ),
                migrations.AddConstraint(
                    model_name="cashtransaction",
                    constraint=models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("kind__in", ["drop", "fill", "reversal"]), _negated=True),
                            models.Q(("approved_by", models.F("created_by")), _negated=True),
                            _connector="OR",
                        ),
                        name="cashtx_approver_is_not_creator",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
