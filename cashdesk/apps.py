from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CashdeskConfig(AppConfig):
    name = "cashdesk"
    verbose_name = _("Cash desk")

    def ready(self) -> None:
        # What the layers below need of the cash desk, provided through their ports (casino_office.ports).
        from cashdesk.checks import books_check
        from cashdesk.history import CASHDESK_SOURCES
        from cashdesk.selectors import DeskOperationHistory, receipts_at_machines
        from cashdesk.services.handpays import handpays_at_machines
        from cashdesk.services.kiosks import KioskBooks
        from compliance.history import OPERATION_HISTORY
        from machines.chains import BOOK_CHECKS
        from machines.history import CONFIG_SOURCES, config_signals_connect
        from tickets.kiosks import KIOSK_CASH
        from tickets.reconciliation import HANDPAY_SOURCES, RECEIPT_SOURCES

        # Kiosks pay tickets and take cash in from their own cash in these books.
        KIOSK_CASH.provide(KioskBooks())
        # The meter reconciliation compares handpay meters with the handpays kept here, and the attendant-paid
        # meters with the machine receipts written on the floor.
        HANDPAY_SOURCES.provide(handpays_at_machines)
        RECEIPT_SOURCES.provide(receipts_at_machines)
        # Compliance reads the desk's transactions (linked-day totals, structuring, the FCIS report).
        OPERATION_HISTORY.provide(DeskOperationHistory())
        # The books' verification checks the desk's rows against the chained transactions.
        BOOK_CHECKS.provide(books_check)
        # Machine receipts, handpays and transfers: their changes copied by triggers and sealed into the
        # instruments' journal (machines.history), checked by the books' verification like the configuration.
        for source in CASHDESK_SOURCES:
            CONFIG_SOURCES.provide(source)
        config_signals_connect(CASHDESK_SOURCES)
