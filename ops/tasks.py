import socket

from celery import shared_task
from django.utils import timezone

from ops.models import Heartbeat

BEAT = "beat"


@shared_task(name="ops.heartbeat")
def heartbeat() -> str:
    now = timezone.now()
    Heartbeat.objects.update_or_create(name=BEAT, defaults={"at": now, "hostname": socket.gethostname()})
    return now.isoformat()
