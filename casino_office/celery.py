import logging.config
import os
import sys
from typing import Any

from celery import Celery
from celery.signals import setup_logging
from django.core.exceptions import ImproperlyConfigured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")


class CasinoCelery(Celery):
    def _load_config(self) -> Any:
        """Celery reads Django's settings on its first look at its configuration (while parsing the command
        line): a setting missing or wrong stops the worker or beat with one line naming it, as manage.py does."""
        try:
            return super()._load_config()
        except ImproperlyConfigured as error:
            sys.exit(f"configuration error: {error}")


app = CasinoCelery("casino_office")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_configure.connect
def _make_filesystem_broker_folders(sender: Celery, **kwargs: object) -> None:
    # kombu's filesystem transport expects its folders to exist.
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "processed_folder"):
        folder = options.get(key)
        if folder:
            os.makedirs(folder, exist_ok=True)


@setup_logging.connect
def use_django_logging(**kwargs: object) -> None:
    """The worker logs through settings.LOGGING, not Celery's own handlers: numbers masked, refusals on one line.

    A message for a task the worker does not know is logged whole, arguments included (casino_office/logmask.py).
    The worker's --loglevel gives way to LOG_LEVEL.
    """
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
