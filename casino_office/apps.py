from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CasinoOfficeConfig(AppConfig):
    """The shared base: the site's frame, the template tags, money helpers, ports and the triggers' rules."""

    name = "casino_office"
    verbose_name = "Casino Office"

    def ready(self) -> None:
        from casino_office.triggers import close_ignore

        # Sent once for every app with models after each migrate (this app has none, so it listens to all).
        post_migrate.connect(close_ignore, dispatch_uid="casino_office.close_ignore")
