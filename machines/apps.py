from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MachinesConfig(AppConfig):
    name = "machines"
    verbose_name = _("Casinos and slot machines")

    def ready(self) -> None:
        from machines.chains import BOOK_CHECKS
        from machines.history import MACHINE_SOURCES, config_check, config_signals_connect

        config_signals_connect(MACHINE_SOURCES)
        BOOK_CHECKS.provide(config_check)
