import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")

app = Celery("casino_office")
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
