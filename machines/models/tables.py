"""The casino's gaming tables and their limits by the general director's order (casino rules §1 and §2.1).

A table is floor equipment like a machine: every layer names it (the pit works it, the count room counts its box),
so it sits at the bottom. Its chip tray and drop box are places (machines.Place), linked to it by the cash desk
(cashdesk.TablePlaces), whose migrations hold the places' table: a column added to that table by a migration of
this app could run before the table exists on a fresh database.
"""

import datetime as dt

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from casino_office.triggers import append_only
from machines.models.floor import Casino


class TableGame(models.TextChoices):
    """The approved table games (casino rules §2.1); written once here."""

    AMERICAN_ROULETTE = "american_roulette", _("American roulette")
    BLACK_JACK = "black_jack", _("Black Jack")
    BLACK_JACK_HI_LO_TORNADO = "black_jack_hi_lo", _("Black Jack Hi-Lo Tornado")
    OASIS_POKER = "oasis_poker", _("Oasis Poker")
    OASIS_POKER_1 = "oasis_poker_1", _("Oasis Poker-1 (with insurance)")
    TEXAS_POKER = "texas_poker", _("Texas Poker")
    TEXAS_POKER_2 = "texas_poker_2", _("Texas Poker-2")
    ULTIMATE_ADMIRAL_TEXAS_POKER = "admiral_texas", _("Ultimate Admiral Texas Poker")
    RUSSIAN_POKER = "russian_poker", _("Russian Poker")
    RUSSIAN_POKER_INSURANCE = "russian_poker_ins", _("Russian Poker with insurance")
    OPEN_POKER = "open_poker", _("Open Poker")
    SEVEN_CARD_POKER = "seven_card_poker", _("Seven Card Poker")
    THREE_CARD_POKER = "three_card_poker", _("Three Card Poker")
    CLUB_POKER = "club_poker", _("Club Poker")
    CASINO_WAR = "casino_war", _("Casino War")


class GamingTable(models.Model):
    """A gaming table of the casino: its number, its game, where it stands; open or closed for the gaming day."""

    Game = TableGame

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="tables", verbose_name=_("casino"))
    number = models.CharField(
        max_length=8, help_text=_("As painted on the table, e.g. AR1."), verbose_name=_("table number")
    )
    game = models.CharField(max_length=20, choices=TableGame.choices, verbose_name=_("game"))
    area = models.CharField(max_length=32, blank=True, verbose_name=_("area"))
    is_open = models.BooleanField(default=False, editable=False, verbose_name=_("open"))

    class Meta:
        verbose_name = _("gaming table")
        verbose_name_plural = _("gaming tables")
        ordering = ["casino", "number"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "number"], name="gamingtable_number_unique_per_casino"),
            models.CheckConstraint(condition=Q(game__in=TableGame.values), name="gamingtable_game_approved"),
            models.CheckConstraint(condition=~Q(number=""), name="gamingtable_number_not_blank"),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.get_game_display()})"


class TableLimitOrder(models.Model):
    """The general director's order setting tables' minimum and maximum stakes and bet steps (casino rules §1).

    Recorded once and never changed: a later order supersedes it from its effective day, and the earlier
    ones stay as the limits' history.
    """

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="table_limit_orders", verbose_name=_("casino")
    )
    number = models.CharField(max_length=32, verbose_name=_("order number"))
    signed_on = models.DateField(verbose_name=_("order date"))
    effective_from = models.DateField(verbose_name=_("effective from"))
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("recorded by")
    )
    recorded_at = models.DateTimeField(verbose_name=_("recorded at"))

    class Meta:
        verbose_name = _("table limits order")
        verbose_name_plural = _("table limits orders")
        ordering = ["casino", "-effective_from", "-id"]
        triggers = append_only()
        constraints = [
            models.UniqueConstraint(fields=["casino", "number"], name="tablelimitorder_number_unique_per_casino"),
            models.CheckConstraint(
                condition=Q(effective_from__gte=models.F("signed_on")), name="tablelimitorder_effective_after_signed"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.number} ({self.signed_on:%Y-%m-%d})"


class TableLimit(models.Model):
    """One line of an order: a table's (or, for every table of a game, the game's) minimum, maximum and step."""

    order = models.ForeignKey(TableLimitOrder, on_delete=models.PROTECT, related_name="limits", verbose_name=_("order"))
    table = models.ForeignKey(
        GamingTable,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="limits",
        verbose_name=_("table"),
    )
    game = models.CharField(max_length=20, choices=TableGame.choices, blank=True, verbose_name=_("game"))
    minimum = models.DecimalField(max_digits=10, decimal_places=2, verbose_name=_("minimum stake"))
    maximum = models.DecimalField(max_digits=10, decimal_places=2, verbose_name=_("maximum stake"))
    step = models.DecimalField(max_digits=10, decimal_places=2, verbose_name=_("bet step"))

    class Meta:
        verbose_name = _("table limit")
        verbose_name_plural = _("table limits")
        ordering = ["order", "id"]
        triggers = append_only()
        constraints = [
            models.CheckConstraint(
                condition=(Q(table__isnull=False) & Q(game=""))
                | (Q(table__isnull=True) & Q(game__in=TableGame.values)),
                name="tablelimit_table_or_game",
            ),
            models.CheckConstraint(condition=Q(minimum__gt=0) & Q(step__gt=0), name="tablelimit_positive"),
            models.CheckConstraint(condition=Q(maximum__gte=models.F("minimum")), name="tablelimit_max_at_least_min"),
            models.UniqueConstraint(
                fields=["order", "table"], condition=Q(table__isnull=False), name="tablelimit_one_per_table"
            ),
            models.UniqueConstraint(fields=["order", "game"], condition=Q(game__gt=""), name="tablelimit_one_per_game"),
        ]

    def __str__(self) -> str:
        return f"{self.minimum}-{self.maximum} / {self.step}"

    def clean(self) -> None:
        try:  # the order may be the admin's, not saved yet
            casino_id = self.order.casino_id
        except TableLimitOrder.DoesNotExist:
            casino_id = None
        if self.table is not None and casino_id is not None and self.table.casino_id != casino_id:
            raise ValidationError({"table": _("A table of another casino cannot be in this casino's order.")})


def table_limit_on(table: GamingTable, day: dt.date) -> TableLimit | None:
    """The limits a table plays under on `day`: from the latest order in force that names the table, or its game
    (an order's line for the table itself before its line for the game)."""
    lines = (
        TableLimit.objects.filter(order__casino_id=table.casino_id, order__effective_from__lte=day)
        .filter(Q(table=table) | Q(game=table.game))
        .select_related("order")
        .order_by("-order__effective_from", "-order_id", "game")
    )
    return lines.first()
