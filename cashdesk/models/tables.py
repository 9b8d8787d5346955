"""A gaming table's places in the books: its chip tray (the table's bank) and the drop box under it.

The table is the floor's (machines.GamingTable); the places are the casino's (machines.Place, kinds tray and
dropbox); this link is the cash desk's, whose migrations hold the places' table.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.lookups import Exact
from django.utils.translation import gettext_lazy as _

from cashdesk.items import CHIPS, Item
from casino_office.constraints import in_cents
from casino_office.triggers import append_only
from machines.models import Casino, GamingTable, Place

# The seats a table has at most (a roulette table's players; a poker table seats ten).
SEATS = 10


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


class TableSession(models.Model):
    """A table's time open: from its opening count to its closing count, with the croupier the pit supervisor named.

    The opening count is the tray's against its last closing (a difference goes to over/short); the closing count
    posts what the tray holds beyond the books as the table's result, and the session keeps the result's parts
    (cashdesk.services.tables). Both counts carry the pit supervisor's name, the session the croupier's.
    """

    table = models.ForeignKey(
        GamingTable, on_delete=models.PROTECT, related_name="sessions", verbose_name=_("gaming table")
    )
    croupier = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("croupier")
    )
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("opened by")
    )
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    opening_count = models.OneToOneField(
        "cashdesk.ShiftCount", on_delete=models.PROTECT, related_name="opened_table", verbose_name=_("opening count")
    )
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("closed by"),
    )
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    closing_count = models.OneToOneField(
        "cashdesk.ShiftCount",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="closed_table",
        verbose_name=_("closing count"),
    )
    # The result's parts, as the books held them at the closing: win = closing - opening + credits - fills + drop.
    opening = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("opening tray"))
    fills = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("fills"))
    credits = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("credits"))
    drop = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text=_("Cash into the drop box as recorded at the table."),
        verbose_name=_("drop"),
    )
    closing = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("closing tray")
    )
    win = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("table win"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )
    close_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("closing key")
    )

    class Meta:
        verbose_name = _("table session")
        verbose_name_plural = _("table sessions")
        ordering = ["-opened_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["table"], condition=Q(closed_at__isnull=True), name="tablesession_one_open_per_table"
            ),
            models.CheckConstraint(
                condition=~Q(croupier=F("opened_by")), name="tablesession_croupier_is_not_the_supervisor"
            ),
            models.CheckConstraint(
                condition=Q(
                    closed_at__isnull=True,
                    closed_by__isnull=True,
                    closing_count__isnull=True,
                    fills__isnull=True,
                    credits__isnull=True,
                    drop__isnull=True,
                    closing__isnull=True,
                    win__isnull=True,
                )
                | Q(
                    closed_at__gte=F("opened_at"),
                    closed_by__isnull=False,
                    closing_count__isnull=False,
                    fills__isnull=False,
                    credits__isnull=False,
                    drop__isnull=False,
                    closing__isnull=False,
                    win__isnull=False,
                ),
                name="tablesession_closed_whole",
            ),
            # In whole cents, exact on SQLite too (casino_office.constraints).
            models.CheckConstraint(
                condition=Q(win__isnull=True)
                | Q(
                    Exact(
                        in_cents("win"),
                        in_cents("closing")
                        - in_cents("opening")
                        + in_cents("credits")
                        - in_cents("fills")
                        + in_cents("drop"),
                    )
                ),
                name="tablesession_win_is_its_parts",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table} from {self.opened_at:%Y-%m-%d %H:%M}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class TableBuyIn(models.Model):
    """Chips bought at a table during play: the seat, with its posting (cash into the drop box, chips out of the
    tray, the person and the register's entry over the threshold). The croupier is the session's."""

    session = models.ForeignKey(
        TableSession, on_delete=models.PROTECT, related_name="buy_ins", verbose_name=_("table session")
    )
    transaction = models.OneToOneField(
        "cashdesk.CashTransaction",
        on_delete=models.PROTECT,
        related_name="buy_in_at_table",
        verbose_name=_("transaction"),
    )
    seat = models.PositiveSmallIntegerField(verbose_name=_("seat"))

    class Meta:
        triggers = append_only()
        verbose_name = _("buy-in at a table")
        verbose_name_plural = _("buy-ins at tables")
        constraints = [
            models.CheckConstraint(condition=Q(seat__gte=1, seat__lte=SEATS), name="tablebuyin_seat_at_the_table"),
        ]

    def __str__(self) -> str:
        return f"seat {self.seat}: {self.transaction_id}"


class ChipColour(models.TextChoices):
    """The colours of a roulette table's colour chips: one colour is one player's at one table at a time."""

    RED = "red", _("red")
    BLUE = "blue", _("blue")
    GREEN = "green", _("green")
    YELLOW = "yellow", _("yellow")
    PURPLE = "purple", _("purple")
    ORANGE = "orange", _("orange")
    PINK = "pink", _("pink")
    WHITE = "white", _("white")


# The value a player may choose for each colour chip (casino rules; 0.01 EUR is a learning chip).
COLOUR_CHIP_VALUES = ("0.01", "0.50", "1", "5", "10", "25", "50", "100", "500")
LEARNING_CHIP = "0.01"


class ColourChips(models.Model):
    """A player's colour chips at a roulette table: issued for value chips (which go into the tray), exchanged back
    to value chips at this table only, never for cash; learning chips' sum rounded up to whole euros in the
    player's favour. Both postings are the books' (cashdesk.services.tables)."""

    Colour = ChipColour

    session = models.ForeignKey(
        TableSession, on_delete=models.PROTECT, related_name="colour_chips", verbose_name=_("table session")
    )
    table = models.ForeignKey(GamingTable, on_delete=models.PROTECT, related_name="+", verbose_name=_("gaming table"))
    colour = models.CharField(max_length=8, choices=ChipColour.choices, verbose_name=_("colour"))
    value = models.DecimalField(max_digits=5, decimal_places=2, verbose_name=_("value of a chip"))
    seat = models.PositiveSmallIntegerField(verbose_name=_("seat"))
    issued = models.PositiveIntegerField(verbose_name=_("chips issued"))
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("issued by")
    )
    issue = models.OneToOneField(
        "cashdesk.CashTransaction",
        on_delete=models.PROTECT,
        related_name="colour_chips_issued",
        verbose_name=_("issue"),
    )
    returned = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("chips returned"))
    paid = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("value chips given back")
    )
    returned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("exchanged back by"),
    )
    exchange = models.OneToOneField(
        "cashdesk.CashTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="colour_chips_returned",
        verbose_name=_("exchange back"),
    )
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )
    return_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("exchange key")
    )

    class Meta:
        verbose_name = _("colour chips")
        verbose_name_plural = _("colour chips")
        constraints = [
            models.UniqueConstraint(
                fields=["table", "colour"], condition=Q(returned__isnull=True), name="colourchips_one_player_a_colour"
            ),
            models.CheckConstraint(condition=Q(colour__in=ChipColour.values), name="colourchips_colour_valid"),
            models.CheckConstraint(condition=Q(value__in=COLOUR_CHIP_VALUES), name="colourchips_value_valid"),
            models.CheckConstraint(condition=Q(issued__gt=0), name="colourchips_issued_some"),
            models.CheckConstraint(
                condition=Q(returned__isnull=True, paid__isnull=True, returned_by__isnull=True, exchange__isnull=True)
                | Q(returned__isnull=False, paid__gte=0, returned_by__isnull=False),
                name="colourchips_returned_whole",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_colour_display()} × {self.value} at {self.table_id}"

    @property
    def is_out(self) -> bool:
        return self.returned is None


class TableSlipSeries(models.Model):
    """Where a casino's series of fill and credit slips stands in a year: numbers are given under its row lock,
    so the series has no gap."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    year = models.PositiveSmallIntegerField(verbose_name=_("year"))
    last_number = models.PositiveIntegerField(default=0, verbose_name=_("last number"))

    class Meta:
        verbose_name = _("slip series")
        verbose_name_plural = _("slip series")
        constraints = [models.UniqueConstraint(fields=["casino", "year"], name="tableslipseries_one_per_year")]

    def __str__(self) -> str:
        return f"{self.casino_id} {self.year}: {self.last_number}"


class TableSlip(models.Model):
    """A fill (chips from the cage to a table's tray) or a credit (back), on a two-part slip: asked for by the pit
    supervisor, issued (or received) at the cage, posted when the pit supervisor confirms it at the table. Numbered
    in one unbroken series per casino and year; never deleted: a void needs two people and stays in the series."""

    class Kind(models.TextChoices):
        # By where the chips go (the books' kinds are table_fill and table_credit).
        FILL = "to_table", _("Fill")
        CREDIT = "to_cage", _("Credit")

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    year = models.PositiveSmallIntegerField(verbose_name=_("year"))
    number = models.PositiveIntegerField(verbose_name=_("number"))
    table = models.ForeignKey(GamingTable, on_delete=models.PROTECT, related_name="+", verbose_name=_("gaming table"))
    session = models.ForeignKey(
        TableSession, on_delete=models.PROTECT, related_name="slips", verbose_name=_("table session")
    )
    kind = models.CharField(max_length=8, choices=Kind.choices, verbose_name=_("kind"))
    cage = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="+", verbose_name=_("cage"))
    chips = models.JSONField(verbose_name=_("chips"), help_text=_("Pieces per value chip."))
    amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("asked for by")
    )
    requested_at = models.DateTimeField(verbose_name=_("asked for at"))
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("issued by"),
    )
    issued_at = models.DateTimeField(null=True, blank=True, verbose_name=_("issued at"))
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("confirmed by"),
    )
    confirmed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("confirmed at"))
    transaction = models.OneToOneField(
        "cashdesk.CashTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="table_slip",
        verbose_name=_("transaction"),
    )
    void_reason = models.CharField(max_length=255, blank=True, verbose_name=_("reason for the void"))
    void_asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("void asked for by"),
    )
    voided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("voided by"),
    )
    voided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("voided at"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        verbose_name = _("fill or credit slip")
        verbose_name_plural = _("fill and credit slips")
        ordering = ["-year", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "year", "number"], name="tableslip_one_per_number"),
            models.CheckConstraint(condition=Q(kind__in=["to_table", "to_cage"]), name="tableslip_kind_valid"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="tableslip_amount_positive"),
            # Asked for; issued at the cage by another person; confirmed at the table by another than the issuer,
            # with its posting; or voided (before it was posted) by a second person.
            models.CheckConstraint(
                condition=(
                    Q(issued_by__isnull=True, issued_at__isnull=True)
                    | (Q(issued_by__isnull=False, issued_at__isnull=False) & ~Q(issued_by=F("requested_by")))
                )
                & (
                    Q(confirmed_by__isnull=True, confirmed_at__isnull=True, transaction__isnull=True)
                    | (
                        Q(issued_by__isnull=False, confirmed_at__isnull=False, transaction__isnull=False)
                        & ~Q(confirmed_by=F("issued_by"))
                    )
                )
                & (
                    Q(voided_by__isnull=True, voided_at__isnull=True)
                    | (
                        Q(transaction__isnull=True, void_asked_by__isnull=False, voided_at__isnull=False)
                        & ~Q(voided_by=F("void_asked_by"))
                    )
                ),
                name="tableslip_state_consistent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.number_display}"

    def pieces(self) -> list[tuple[str, int]]:
        """The chips by denomination, the highest first, as (the chip's name, pieces)."""
        return [(str(Item(item).label), self.chips[item]) for item in CHIPS if self.chips.get(item)]

    @property
    def number_display(self) -> str:
        return f"{self.year}-{self.number:05d}"

    @property
    def state(self) -> str:
        if self.voided_at is not None:
            return "voided"
        if self.confirmed_at is not None:
            return "confirmed"
        if self.issued_at is not None:
            return "issued"
        return "requested"
