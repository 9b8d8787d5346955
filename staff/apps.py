from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class StaffConfig(AppConfig):
    name = "staff"
    verbose_name = _("Staff")

    def ready(self) -> None:
        from django.core import checks

        from machines.history import CONFIG_SOURCES, config_signals_connect
        from staff.history import STAFF_SOURCES
        from staff.middleware import check_staff_csrf_cookie_secure, check_staff_only_middleware
        from staff.roles import ensure_roles

        post_migrate.connect(ensure_roles, sender=self)
        checks.register(check_staff_only_middleware)
        checks.register(check_staff_csrf_cookie_secure, checks.Tags.security, deploy=True)
        for source in STAFF_SOURCES:
            CONFIG_SOURCES.provide(source)
        config_signals_connect(STAFF_SOURCES)
