"""The gaming tables as the books see them: each made with its chip tray and drop box (issue 24)."""

from django.db import transaction
from django.utils.translation import gettext as _

from cashdesk.models import TablePlaces
from machines.models import Casino, GamingTable, Place


def table_create(*, casino: Casino, number: str, game: str, area: str = "") -> GamingTable:
    """A gaming table with its chip tray and its drop box (places in the books, empty), in one transaction.

    They hold chips and the buy-ins' cash: no shifts, no cash limit of a desk's.
    """
    with transaction.atomic():
        table = GamingTable.objects.create(casino=casino, number=number, game=game, area=area)
        places = {
            kind: Place.objects.create(
                casino=casino,
                kind=kind,
                code=f"{prefix}-{number}",
                name=name % {"table": number},
                cash_limit_enforced=False,
            )
            for kind, prefix, name in (
                (Place.Kind.TRAY, "TRAY", _("Chip tray %(table)s")),
                (Place.Kind.DROP_BOX, "DROP", _("Drop box %(table)s")),
            )
        }
        TablePlaces.objects.create(table=table, tray=places[Place.Kind.TRAY], drop_box=places[Place.Kind.DROP_BOX])
    return table
