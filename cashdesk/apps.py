from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CashdeskConfig(AppConfig):
    name = "cashdesk"
    verbose_name = _("Cash desk")

    def ready(self) -> None:
        # The meter reconciliation (tickets) compares handpay meters with the handpays kept here.
        from cashdesk.services.handpays import handpays_at_machines
        from tickets.reconciliation import register_handpay_source

        register_handpay_source(handpays_at_machines)
