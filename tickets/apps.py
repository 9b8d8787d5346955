from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TicketsConfig(AppConfig):
    name = "tickets"
    verbose_name = _("One-time tickets")

    def ready(self) -> None:
        from machines.chains import BOOK_CHECKS
        from tickets.checks import tickets_check

        # The books' verification checks each ticket's state against its chained events.
        BOOK_CHECKS.provide(tickets_check)
