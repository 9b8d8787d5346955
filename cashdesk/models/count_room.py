"""The drop and the count (issue 25): drop boxes taken out of the slot machines and tables, counted twice in the
count room and approved into the vault (cashdesk.services.count_room)."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cashdesk.models.books import CashTransaction
from casino_office.triggers import append_only
from machines.models import Casino, GamingTable, Machine, MeterReading, Place
from machines.models.chains import Chained, chain_link_unique


class DifferenceReason(models.TextChoices):
    """Why a box's count differs from what the books say it held, beyond the casino's limit: the count room's
    list, chosen by the count supervisor at the approval."""

    METER_FAULT = "meter_fault", _("The machine's note meter is wrong")
    ACCEPTOR_JAM = "acceptor_jam", _("A note stuck in the acceptor or a jam")
    BOX_HANDLING = "box_handling", _("Box handling at the drop")
    RECORDING = "recording", _("A buy-in recorded wrong at the table")
    INVESTIGATION = "investigation", _("Unexplained: sent for investigation")


class DropRun(models.Model):
    """One drop: the drop team (who records it and the witness, two people) removes the boxes of some machines and
    tables; then the count of those boxes, approved once by a count supervisor who counted none of them."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="drop_runs", verbose_name=_("casino"))
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("drop team")
    )
    witness = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("witness")
    )
    started_at = models.DateTimeField(verbose_name=_("started at"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("count approved by"),
    )
    approved_at = models.DateTimeField(null=True, blank=True, verbose_name=_("count approved at"))
    approval_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("approval key")
    )

    class Meta:
        verbose_name = _("drop run")
        verbose_name_plural = _("drop runs")
        ordering = ["-started_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=~Q(witness=F("started_by")), name="droprun_two_people"),
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True, approved_at__isnull=True)
                | Q(approved_by__isnull=False, approved_at__isnull=False),
                name="droprun_approval_recorded",
            ),
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True)
                | (~Q(approved_by=F("started_by")) & ~Q(approved_by=F("witness"))),
                name="droprun_approver_not_the_drop_team",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.casino_id} drop {self.gaming_day}"


class DroppedBox(models.Model):
    """A drop box taken out on a drop run: a slot machine's (its notes, and the tickets it took in) or a table's
    (its buy-ins' cash). `expected` is the cash the books put into it: the machine's notes meter's change since the
    box's last removal, or the table box's balance. The box's number is scanned at removal, on arrival in the count
    room and at each count. `counted`, `notes` and `tickets` are the count two counters agreed on."""

    drop = models.ForeignKey(DropRun, on_delete=models.PROTECT, related_name="boxes", verbose_name=_("drop run"))
    place = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="removals", verbose_name=_("drop box"))
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("machine")
    )
    table = models.ForeignKey(
        GamingTable, on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("gaming table")
    )
    box_number = models.CharField(max_length=32, verbose_name=_("box number"))
    removed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("removed by")
    )
    removed_at = models.DateTimeField(verbose_name=_("removed at"))
    meter_reading = models.ForeignKey(
        MeterReading, on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("meter reading")
    )
    # The machine's lifetime notes meter at the removal: from its reading, or typed by the team from its screen.
    bills_in_meter = models.DecimalField(
        max_digits=18, decimal_places=3, null=True, blank=True, verbose_name=_("notes meter")
    )
    meters_typed = models.BooleanField(default=False, verbose_name=_("meters typed"))
    expected = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("expected cash"))
    removal_transaction = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="box_removed",
        verbose_name=_("removal posting"),
    )
    arrived_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("received by"),
    )
    arrived_at = models.DateTimeField(null=True, blank=True, verbose_name=_("received at"))
    counted = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("cash counted")
    )
    notes = models.JSONField(default=dict, blank=True, verbose_name=_("notes counted"))
    tickets = models.JSONField(default=list, blank=True, verbose_name=_("tickets found"))
    reason = models.CharField(
        max_length=16, choices=DifferenceReason.choices, blank=True, verbose_name=_("reason for the difference")
    )
    count_transaction = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="box_counted",
        verbose_name=_("count posting"),
    )
    # Set for every box of the count when the count is approved (a box counted empty has no posting).
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))

    class Meta:
        verbose_name = _("dropped box")
        verbose_name_plural = _("dropped boxes")
        ordering = ["drop", "id"]
        constraints = [
            # A box is removed once per drop, and is not removed again until its count is approved.
            models.UniqueConstraint(fields=["drop", "place"], name="droppedbox_once_per_drop"),
            models.UniqueConstraint(
                fields=["place"], condition=Q(closed_at__isnull=True), name="droppedbox_one_open_per_place"
            ),
            models.CheckConstraint(
                condition=Q(machine__isnull=False, table__isnull=True) | Q(machine__isnull=True, table__isnull=False),
                name="droppedbox_machine_or_table",
            ),
            models.CheckConstraint(condition=Q(expected__gte=0), name="droppedbox_expected_not_negative"),
            models.CheckConstraint(
                condition=Q(counted__isnull=True) | Q(counted__gte=0), name="droppedbox_counted_not_negative"
            ),
            models.CheckConstraint(
                condition=Q(closed_at__isnull=True, count_transaction__isnull=True) | Q(counted__isnull=False),
                name="droppedbox_closed_when_counted",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.box_number} ({self.machine_id or self.table_id})"


class BoxTally(Chained):
    """One counter's count of one box: the notes by value, the cash they make and the tickets scanned. Each counter
    counts blind to the others; the box's count is set when two counters agree (cashdesk.services.count_room).

    A chained journal (machines.chains): no count, nor the box it counted, changes unseen.
    """

    journal = "box_tallies"
    journal_casino = "box__drop__casino_id"
    journal_fields = (
        "box_id",
        "counter_id",
        "notes",
        "cash",
        "tickets",
        "counted_at",
        "operation_key",
        "box__box_number",
        "box__place_id",
        "box__drop_id",
    )

    box = models.ForeignKey(DroppedBox, on_delete=models.PROTECT, related_name="tallies", verbose_name=_("box"))
    counter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("counter")
    )
    notes = models.JSONField(verbose_name=_("notes"))
    cash = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("cash"))
    tickets = models.JSONField(default=list, blank=True, verbose_name=_("tickets scanned"))
    counted_at = models.DateTimeField(verbose_name=_("counted at"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        triggers = append_only()
        verbose_name = _("box tally")
        verbose_name_plural = _("box tallies")
        ordering = ["box", "counted_at", "id"]
        constraints = [
            models.CheckConstraint(condition=Q(cash__gte=0), name="boxtally_cash_not_negative"),
            chain_link_unique("boxtally"),
        ]

    def __str__(self) -> str:
        return f"{self.box_id} by {self.counter_id}"


class GamingDayClose(Chained):
    """A gaming day closed by a manager once every box dropped that day is counted: the statement's figures as they
    were (`figures`: its lines, amounts as strings), chained. A closed day's figures change only by an adjustment."""

    journal = "gaming_days"
    journal_casino = "casino_id"
    journal_fields = ("casino_id", "gaming_day", "closed_by_id", "closed_at", "figures", "operation_key")

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    closed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("closed by")
    )
    closed_at = models.DateTimeField(verbose_name=_("closed at"))
    figures = models.JSONField(verbose_name=_("figures"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        triggers = append_only()
        verbose_name = _("closed gaming day")
        verbose_name_plural = _("closed gaming days")
        ordering = ["-gaming_day"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "gaming_day"], name="gamingdayclose_once_per_day"),
            chain_link_unique("gamingdayclose"),
        ]

    def __str__(self) -> str:
        return f"{self.casino_id} {self.gaming_day}"


class GamingDayAdjustment(Chained):
    """A change of a closed gaming day's result, with its reason and who made it: shown as such on the statement."""

    journal = "gaming_day_adjustments"
    journal_casino = "day__casino_id"
    journal_fields = ("day_id", "line", "amount", "reason", "made_by_id", "made_at", "operation_key", "day__gaming_day")

    day = models.ForeignKey(
        GamingDayClose, on_delete=models.PROTECT, related_name="adjustments", verbose_name=_("gaming day")
    )
    line = models.CharField(max_length=64, verbose_name=_("line"))
    amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    reason = models.CharField(max_length=255, verbose_name=_("reason"))
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("made by")
    )
    made_at = models.DateTimeField(verbose_name=_("made at"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        triggers = append_only()
        verbose_name = _("gaming day adjustment")
        verbose_name_plural = _("gaming day adjustments")
        ordering = ["day", "made_at", "id"]
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="gamingdayadjustment_not_zero"),
            models.CheckConstraint(condition=~Q(reason=""), name="gamingdayadjustment_has_reason"),
            chain_link_unique("gamingdayadjustment"),
        ]

    def __str__(self) -> str:
        return f"{self.day_id} {self.line} {self.amount}"
