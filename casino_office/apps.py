from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CasinoOfficeConfig(AppConfig):
    """The shared base: the site's frame, the template tags, money helpers, ports and the triggers' rules."""

    name = "casino_office"
    verbose_name = "Casino Office"

    def ready(self) -> None:
        from django.apps import apps

        from casino_office.triggers import close_ignore

        # post_migrate is sent once per app with a models module after each migrate; this app has none, so it
        # listens to pgtrigger's (which has one for that reason): once per migrate, after every migration.
        post_migrate.connect(
            close_ignore, sender=apps.get_app_config("pgtrigger"), dispatch_uid="casino_office.close_ignore"
        )
