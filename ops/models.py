from django.db import models
from django.utils.translation import gettext_lazy as _


class Heartbeat(models.Model):
    """The last time a scheduled job ran: beat sends `ops.heartbeat` every minute and a worker runs it.

    /health/ reads its age: a stale heartbeat means beat is down, or no worker
    takes work off the queue (the queue length tells which).
    """

    name = models.CharField(max_length=40, primary_key=True, verbose_name=_("name"))
    at = models.DateTimeField(verbose_name=_("at"))
    hostname = models.CharField(max_length=255, blank=True, verbose_name=_("hostname"))

    class Meta:
        verbose_name = _("heartbeat")
        verbose_name_plural = _("heartbeats")

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"
