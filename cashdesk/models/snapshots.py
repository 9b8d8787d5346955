from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from machines.models import Casino


class LiabilitySnapshot(models.Model):
    """Outstanding ticket liability at the end of a finished gaming day.

    A past moment's liability never changes (every timestamp is the server's
    clock at commit, never backdated), so each day is computed once, by the
    cashdesk.snapshot_liability job, and the dashboard's 30-day trend reads
    these rows instead of aggregating a month of tickets on every page load.
    """

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="liability_snapshots", verbose_name=_("casino")
    )
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    at = models.DateTimeField(verbose_name=_("at"), help_text=_("The end of the gaming day."))
    amount = models.DecimalField(max_digits=14, decimal_places=3, verbose_name=_("amount"))
    computed_at = models.DateTimeField(auto_now_add=True, verbose_name=_("computed at"))

    class Meta:
        verbose_name = _("liability snapshot")
        verbose_name_plural = _("liability snapshots")
        constraints = [
            models.UniqueConstraint(fields=["casino", "gaming_day"], name="liabilitysnapshot_one_per_day"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="liabilitysnapshot_amount_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.casino_id} {self.gaming_day}: {self.amount}"
