"""A gaming table's places in the books: its chip tray (the table's bank) and the drop box under it.

The table is the floor's (machines.GamingTable); the places are the casino's (machines.Place, kinds tray and
dropbox); this link is the cash desk's, whose migrations hold the places' table.
"""

from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from machines.models import GamingTable, Place


class TablePlaces(models.Model):
    """Which places are a table's tray and drop box: made with the table (cashdesk.services.tables), never moved."""

    table = models.OneToOneField(
        GamingTable, on_delete=models.PROTECT, related_name="books", verbose_name=_("gaming table")
    )
    tray = models.OneToOneField(Place, on_delete=models.PROTECT, related_name="tray_of", verbose_name=_("chip tray"))
    drop_box = models.OneToOneField(
        Place, on_delete=models.PROTECT, related_name="drop_box_of", verbose_name=_("drop box")
    )

    class Meta:
        verbose_name = _("table's places")
        verbose_name_plural = _("tables' places")
        constraints = [
            models.CheckConstraint(condition=~Q(tray=F("drop_box")), name="tableplaces_tray_is_not_the_drop_box"),
        ]

    def __str__(self) -> str:
        return str(self.table)
