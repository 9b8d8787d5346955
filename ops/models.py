from django.db import models


class Heartbeat(models.Model):
    """The last time a scheduled job ran: beat sends `ops.heartbeat` every minute and a worker runs it.

    /health/ reads its age: a stale heartbeat means beat is down, or no worker
    takes work off the queue (the queue length tells which).
    """

    name = models.CharField(max_length=40, primary_key=True)
    at = models.DateTimeField()
    hostname = models.CharField(max_length=255, blank=True)

    def __str__(self) -> str:
        return f"{self.name} at {self.at:%Y-%m-%d %H:%M:%S}"
