from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ComplianceConfig(AppConfig):
    name = "compliance"
    verbose_name = _("Compliance")

    def ready(self) -> None:
        from compliance.config_history import COMPLIANCE_SOURCES
        from compliance.services.person_versions import persons_check
        from compliance.services.register import REGISTER_CHAIN
        from machines.chains import BOOK_CHECKS, OTHER_CHAINS
        from machines.history import CONFIG_SOURCES, config_signals_connect

        # The register is verified and anchored with the books (verify_books, the books' anchors).
        OTHER_CHAINS.provide(REGISTER_CHAIN)
        BOOK_CHECKS.provide(persons_check)
        for source in COMPLIANCE_SOURCES:
            CONFIG_SOURCES.provide(source)
        config_signals_connect(COMPLIANCE_SOURCES)
