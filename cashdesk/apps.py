from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CashdeskConfig(AppConfig):
    name = "cashdesk"
    verbose_name = _("Cash desk")

    def ready(self) -> None:
        from cashdesk.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self)
