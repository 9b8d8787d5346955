"""What a cash desk holds: cash, value chips per denomination and slot tokens (casino rules §1).

Colour chips are not a cash-desk item: they are exchanged only at their table.
"""

from decimal import Decimal

from django.db import models
from django.utils.translation import gettext_lazy as _


class Item(models.TextChoices):
    CASH = "cash", _("Cash")
    CHIP_500 = "chip_500", _("Chip 500 €")
    CHIP_100 = "chip_100", _("Chip 100 €")
    CHIP_25 = "chip_25", _("Chip 25 €")
    CHIP_5 = "chip_5", _("Chip 5 €")
    CHIP_1 = "chip_1", _("Chip 1 €")
    CHIP_0_50 = "chip_0_50", _("Chip 0.50 €")
    TOKEN = "token", _("Slot token 1 €")


# The value of one piece of each counted item.
DENOMINATIONS: dict[str, Decimal] = {
    Item.CHIP_500: Decimal("500"),
    Item.CHIP_100: Decimal("100"),
    Item.CHIP_25: Decimal("25"),
    Item.CHIP_5: Decimal("5"),
    Item.CHIP_1: Decimal("1"),
    Item.CHIP_0_50: Decimal("0.50"),
    Item.TOKEN: Decimal("1"),
}
CHIPS: list[str] = [Item.CHIP_500, Item.CHIP_100, Item.CHIP_25, Item.CHIP_5, Item.CHIP_1, Item.CHIP_0_50]
ALL_ITEMS: list[str] = [Item.CASH, *CHIPS, Item.TOKEN]


# The euro notes a slot machine's note acceptor takes and a count room counts, by value.
NOTES: tuple[Decimal, ...] = tuple(Decimal(value) for value in ("500", "200", "100", "50", "20", "10", "5"))


def item_value(item: str, count: int) -> Decimal:
    return DENOMINATIONS[item] * count
