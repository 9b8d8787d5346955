from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ComplianceConfig(AppConfig):
    name = "compliance"
    verbose_name = _("Compliance")

    def ready(self) -> None:
        from compliance.services.register import REGISTER_CHAIN
        from machines.chains import OTHER_CHAINS

        # The register is verified and anchored with the books (verify_books, the books' anchors).
        OTHER_CHAINS.provide(REGISTER_CHAIN)
