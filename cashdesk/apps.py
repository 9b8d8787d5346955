from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CashdeskConfig(AppConfig):
    name = "cashdesk"
    verbose_name = "Cash desk"

    def ready(self) -> None:
        from cashdesk.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self)
