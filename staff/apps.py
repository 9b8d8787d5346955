from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = _("Staff")

    def ready(self) -> None:
        from staff.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self)
