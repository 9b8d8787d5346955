from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CashdeskConfig(AppConfig):
    name = "cashdesk"
    verbose_name = _("Cash desk")

    def ready(self) -> None:
        # The meter reconciliation (tickets) compares handpay meters with the handpays kept here.
        from cashdesk.selectors import receipts_at_machines
        from cashdesk.services.handpays import handpays_at_machines
        from cashdesk.services.kiosks import KioskBooks
        from tickets.kiosks import register_kiosk_cash
        from tickets.reconciliation import register_handpay_source, register_receipt_source

        register_handpay_source(handpays_at_machines)
        # And its attendant-paid meters with the machine receipts written on the floor.
        register_receipt_source(receipts_at_machines)
        # Kiosks pay tickets and take cash in from their own cash in these books (tickets.kiosks).
        register_kiosk_cash(KioskBooks())
