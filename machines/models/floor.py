import datetime as dt
import zoneinfo
from decimal import Decimal
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from casino_office.triggers import append_only
from machines.models.chains import Chained, chain_link_unique

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


def validate_time_zone(value: str) -> None:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(_("%(zone)r is not a known time zone") % {"zone": value}) from None


def cage_kinds() -> tuple[str, ...]:
    """The kinds of place that can be a cage of the gaming tables: a cash desk or the vault."""
    from machines.models.places import PlaceKind

    return (PlaceKind.DESK, PlaceKind.VAULT)


class Casino(models.Model):
    """A licensed casino; every per-casino rule of the ticket system is a field here."""

    name = models.CharField(max_length=120, unique=True, verbose_name=_("name"))
    address = models.CharField(max_length=255, verbose_name=_("address"))
    licence_number = models.CharField(max_length=64, verbose_name=_("licence number"))
    code = models.CharField(
        max_length=16,
        unique=True,
        validators=[RegexValidator(r"^[A-Z0-9]{2,16}$", _("Use 2-16 capital letters or digits."))],
        help_text=_("Short code, e.g. TOR."),
        verbose_name=_("code"),
    )
    time_zone = models.CharField(
        max_length=64, default="Europe/Vilnius", validators=[validate_time_zone], verbose_name=_("time zone")
    )
    language = models.CharField(
        max_length=8, default="lt", help_text=_("Language of printed tickets."), verbose_name=_("language")
    )
    gaming_day_start_hour = models.PositiveSmallIntegerField(
        default=6,
        validators=[MaxValueValidator(23)],
        help_text=_("Local hour at which the gaming day begins."),
        verbose_name=_("gaming day start hour"),
    )
    ticket_validity_days = models.PositiveSmallIntegerField(
        default=30, validators=[MinValueValidator(1)], verbose_name=_("ticket validity days")
    )
    max_ticket_amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("10000.00"),
        validators=[MinValueValidator(Decimal("0.01"))],
        verbose_name=_("max ticket amount"),
    )
    # The largest single drop or fill, and the largest machine receipt, the desk accepts.
    max_transfer_amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("100000.00"),
        validators=[MinValueValidator(Decimal("0.01"))],
        verbose_name=_("max transfer amount"),
    )
    max_receipt_amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("100000.00"),
        validators=[MinValueValidator(Decimal("0.01"))],
        verbose_name=_("max machine receipt amount"),
    )
    redemption_hold_seconds = models.PositiveSmallIntegerField(
        default=15, validators=[MinValueValidator(1)], verbose_name=_("redemption hold seconds")
    )
    # Machine contract v1.1: how many validation numbers a machine may hold for offline cashouts.
    validation_pool_size = models.PositiveSmallIntegerField(
        default=20,
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
        verbose_name=_("validation pool size"),
        help_text=_("Validation numbers a machine keeps reserved to print tickets while it cannot reach the host."),
    )
    # Kiosks (machine contract v1.1): the largest ticket a kiosk pays, so that anybody paid more is identified at a
    # cashier (it may not exceed the identity threshold: a kiosk identifies nobody), and the cash a kiosk holds.
    kiosk_payout_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("1000.00"),
        validators=[MinValueValidator(Decimal("0.01"))],
        verbose_name=_("kiosk payout limit"),
        help_text=_("The largest ticket a kiosk pays in cash; larger ones are paid at a cash desk."),
    )
    kiosk_cash_capacity = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("30000.00"),
        validators=[MinValueValidator(Decimal("0.01"))],
        verbose_name=_("kiosk cash capacity"),
        help_text=_("The most cash a kiosk's cassettes hold; a fill may not take a kiosk above it."),
    )
    # Casino rules §1 (value chips): strictly more than this needs the person identified.
    identity_threshold = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("1000.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("identity threshold"),
    )
    # Casino rules §1.7: the decision on a held ticket is taken within 14 days of its presentation.
    hold_decision_days = models.PositiveSmallIntegerField(
        default=14, validators=[MinValueValidator(1)], verbose_name=_("hold decision days")
    )
    # Identification and the register (DOMAIN.md: Lithuanian law admits nobody under 21;
    # EU AML due diligence at 2 000 EUR; FCIS cash-operation report at 15 000 EUR; records kept 8 years).
    minimum_age = models.PositiveSmallIntegerField(
        default=21, validators=[MinValueValidator(18)], verbose_name=_("minimum age")
    )
    # The day's total (issue 26): a cash purchase with no admitted visitor linked (a scanned visit card or one of
    # today's visitors picked) is allowed only up to this; 0, every purchase is linked, so a person's purchases over
    # the gaming day are added up for the register.
    anonymous_purchase_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("0.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("anonymous purchase limit"),
        help_text=_("The largest cash purchase a desk or a table takes without a visitor linked; 0: every one."),
    )
    # The door (issue 26): the self-exclusion list imported longer ago than this, the reception fails closed (a
    # supervisor's override with a reason admits).
    self_exclusion_max_age_hours = models.PositiveSmallIntegerField(
        default=24,
        validators=[MinValueValidator(1)],
        verbose_name=_("self-exclusion list's maximum age (hours)"),
        help_text=_("Older than this, the reception admits only on a supervisor's override."),
    )
    due_diligence_threshold = models.DecimalField(
        max_digits=12, decimal_places=2, default=Decimal("2000.00"), verbose_name=_("due diligence threshold")
    )
    fcis_report_threshold = models.DecimalField(
        max_digits=12, decimal_places=2, default=Decimal("15000.00"), verbose_name=_("fcis report threshold")
    )
    structuring_ratio = models.DecimalField(
        max_digits=4,
        decimal_places=2,
        default=Decimal("0.80"),
        help_text=_("Just under = from this share of the threshold."),
        verbose_name=_("structuring ratio"),
    )
    structuring_count = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(2)], verbose_name=_("structuring count")
    )
    structuring_window_minutes = models.PositiveSmallIntegerField(
        default=60, validators=[MinValueValidator(1)], verbose_name=_("structuring window minutes")
    )
    machine_structuring_window_hours = models.PositiveSmallIntegerField(
        default=24, validators=[MinValueValidator(1)], verbose_name=_("machine structuring window hours")
    )
    register_retention_years = models.PositiveSmallIntegerField(
        default=8, validators=[MinValueValidator(1)], verbose_name=_("register retention years")
    )
    # The door (issue 26): visits and entry refusals name the person this long, then the retention job pseudonymises a
    # person named by nothing kept longer (docs/operations.md, "Retention": the legal basis).
    visit_retention_years = models.PositiveSmallIntegerField(
        default=8, validators=[MinValueValidator(1)], verbose_name=_("visit retention years")
    )
    # Four eyes (issue 21): a count whose difference, or any other write-off to over/short, is larger than this
    # (per item, in euro) posts only when a second supervisor approves it.
    count_approval_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("100.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("count difference approval limit"),
        help_text=_("A count difference or write-off above this (per item, EUR) waits for a second supervisor."),
    )
    # A gaming table's tray counted at its opening differs from its last closing by more than this (in all, EUR):
    # reported to the shift supervisor in the exceptions (issue 24).
    table_count_tolerance = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("25.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("table count tolerance"),
        help_text=_("A table's tray counted at its opening off its last closing by more than this is an exception."),
    )
    # A drop box counted off what the books say it holds by more than this amount, or this share of the box, needs a
    # reason from the count room's list (issue 25).
    count_difference_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("20.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("count difference limit"),
        help_text=_("A drop box counted off its expected content by more than this (EUR) needs a reason."),
    )
    count_difference_percent = models.DecimalField(
        max_digits=5,
        decimal_places=2,
        default=Decimal("1.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("count difference per cent"),
        help_text=_("A drop box counted off its expected content by more than this share of it needs a reason."),
    )
    # The drop team (issue 25): whoever records the drop run and a witness, two people of the drop team; the witness
    # a security officer unless the casino lets any second member of the drop team witness it.
    drop_witness_any = models.BooleanField(
        default=False,
        verbose_name=_("any drop team member witnesses a drop"),
        help_text=_("Otherwise the drop run's witness is a security officer."),
    )
    # The cage of the gaming tables (issue 24): the cash desk or the vault that fills their trays and takes their
    # credits; the vault while none is set. Which casino's place it is and its kind are checked in `clean` and by
    # the slip's service.
    table_cage = models.ForeignKey(
        "machines.Place",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("cage of the gaming tables"),
        help_text=_("The desk or the vault that fills the tables' trays and takes their credits; the vault if empty."),
    )
    # A machine receipt above this is confirmed by a supervisor before a cashier may pay it.
    receipt_confirmation_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("100.00"),
        validators=[MinValueValidator(Decimal("0"))],
        verbose_name=_("machine receipt confirmation limit"),
        help_text=_("A machine receipt above this is confirmed by a supervisor before it is paid."),
    )
    # A blind count: the cashier sees no expected balances during the shift, so the closing count is their own.
    blind_count = models.BooleanField(
        default=True,
        verbose_name=_("blind count"),
        help_text=_("Cashiers see no expected balances during a shift."),
    )
    # Failed validation-number lookups tolerated per machine before 429
    # (machine-api.md: "Guessing numbers is how ticket fraud starts").
    lookup_failure_limit = models.PositiveSmallIntegerField(
        default=20, validators=[MinValueValidator(1)], verbose_name=_("lookup failure limit")
    )
    lookup_failure_window_seconds = models.PositiveSmallIntegerField(
        default=60, validators=[MinValueValidator(1)], verbose_name=_("lookup failure window seconds")
    )

    class Meta:
        verbose_name = _("casino")
        verbose_name_plural = _("casinos")
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(gaming_day_start_hour__lte=23), name="casino_gaming_day_hour_valid"),
            models.CheckConstraint(condition=Q(ticket_validity_days__gte=1), name="casino_validity_positive"),
            models.CheckConstraint(condition=Q(max_ticket_amount__gt=0), name="casino_max_ticket_positive"),
            models.CheckConstraint(condition=Q(redemption_hold_seconds__gte=1), name="casino_hold_positive"),
            models.CheckConstraint(condition=Q(identity_threshold__gte=0), name="casino_identity_threshold_valid"),
            models.CheckConstraint(condition=Q(hold_decision_days__gte=1), name="casino_hold_decision_days_positive"),
            models.CheckConstraint(condition=Q(lookup_failure_limit__gte=1), name="casino_lookup_limit_positive"),
            models.CheckConstraint(condition=Q(kiosk_payout_limit__gt=0), name="casino_kiosk_limit_positive"),
            models.CheckConstraint(condition=Q(kiosk_cash_capacity__gt=0), name="casino_kiosk_capacity_positive"),
            models.CheckConstraint(condition=Q(count_approval_limit__gte=0), name="casino_count_approval_valid"),
            models.CheckConstraint(
                condition=Q(receipt_confirmation_limit__gte=0), name="casino_receipt_confirmation_valid"
            ),
            models.CheckConstraint(
                condition=Q(lookup_failure_window_seconds__gte=1), name="casino_lookup_window_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        super().clean()
        cage = self.table_cage
        if cage is not None and (cage.casino_id != self.pk or cage.kind not in cage_kinds()):
            raise ValidationError({"table_cage": _("The tables' cage is one of this casino's desks or its vault.")})
        if (
            self.kiosk_payout_limit is not None
            and self.identity_threshold is not None
            and self.kiosk_payout_limit > self.identity_threshold
        ):
            raise ValidationError(
                {
                    "kiosk_payout_limit": _(
                        "A kiosk identifies nobody: its payout limit may not be above the identity threshold."
                    )
                }
            )

    @property
    def kiosk_payout_ceiling(self) -> Decimal:
        """The most a kiosk pays: its limit, and never above the identity threshold (a kiosk identifies nobody)."""
        return min(self.kiosk_payout_limit, self.identity_threshold)

    @property
    def zoneinfo(self) -> zoneinfo.ZoneInfo:
        return zoneinfo.ZoneInfo(self.time_zone)

    def gaming_day(self, moment: dt.datetime) -> dt.date:
        """The gaming day a moment belongs to: it starts at the casino's start hour, local time."""
        local = moment.astimezone(self.zoneinfo)
        return (local - dt.timedelta(hours=self.gaming_day_start_hour)).date()

    def gaming_day_bounds(self, first: dt.date, last: dt.date | None = None) -> tuple[dt.datetime, dt.datetime]:
        """From the start of gaming day `first` to the start of the day after `last` (default: `first`)."""
        start = dt.time(self.gaming_day_start_hour)
        begin = dt.datetime.combine(first, start, tzinfo=self.zoneinfo)
        finish = dt.datetime.combine((last or first) + dt.timedelta(days=1), start, tzinfo=self.zoneinfo)
        return begin, finish


class Game(models.Model):
    """A game title from the casino's catalogue."""

    title = models.CharField(max_length=120, unique=True, verbose_name=_("title"))

    class Meta:
        verbose_name = _("game")
        verbose_name_plural = _("games")
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Machine(models.Model):
    class Kind(models.TextChoices):
        SLOT = "slot", _("Slot machine")
        KIOSK = "kiosk", _("Kiosk")

    class Status(models.TextChoices):
        ACTIVE = "active", _("Active")
        OUT_OF_SERVICE = "out_of_service", _("Out of service")
        RETIRED = "retired", _("Retired")

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="machines", verbose_name=_("casino"))
    asset_number = models.CharField(
        max_length=32,
        validators=[RegexValidator(r"^[A-Za-z0-9._-]{1,32}$", _("Letters, digits, '.', '_' or '-'."))],
        verbose_name=_("asset number"),
    )
    # Machine contract v1.1: a kiosk redeems tickets for cash from cash of its own in the books.
    kind = models.CharField(
        max_length=8, choices=Kind.choices, default=Kind.SLOT, db_default=Kind.SLOT.value, verbose_name=_("kind")
    )
    serial_number = models.CharField(max_length=64, blank=True, verbose_name=_("serial number"))
    manufacturer = models.CharField(max_length=64, blank=True, verbose_name=_("manufacturer"))
    model_name = models.CharField(_("model"), max_length=64, blank=True)
    games = models.ManyToManyField(Game, blank=True, related_name="machines", verbose_name=_("games"))
    credit_value = models.DecimalField(
        max_digits=7,
        decimal_places=3,
        default=Decimal("0.010"),
        validators=[MinValueValidator(Decimal("0.001"))],
        help_text=_("Value of one credit in EUR (0.001, 0.01, 0.05, 0.10, 1.00 ...)."),
        verbose_name=_("credit value"),
    )
    area = models.CharField(max_length=32, blank=True, verbose_name=_("area"))
    bank = models.CharField(max_length=32, blank=True, verbose_name=_("bank"))
    position = models.CharField(max_length=32, blank=True, verbose_name=_("position"))
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE, verbose_name=_("status"))
    ticket_enrolled = models.BooleanField(
        _("enrolled in the ticket system"),
        default=False,
        help_text=_("The 'special mark': the machine is joined to the ticket system (casino rules §1.7)."),
    )
    # SHA-256 of the machine's key. Keys are 256-bit random strings, so a
    # fast hash is enough; only the hash is ever stored.
    api_key_hash = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("api key hash")
    )
    api_key_rotated_at = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name=_("api key rotated at")
    )
    last_seen_at = models.DateTimeField(null=True, blank=True, editable=False, verbose_name=_("last seen at"))
    # Set when a failed lookup takes the machine to its casino's limit of guessed numbers: until then every
    # numbered request is refused 429. Kept on the row the authentication reads anyway, so the success path
    # costs no query for the limit.
    lookups_blocked_until = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name=_("lookups blocked until")
    )
    # Counter behind the per-machine ticket sequence; only the issue service
    # increments it, under a row lock.
    last_ticket_sequence = models.PositiveIntegerField(
        default=0, editable=False, verbose_name=_("last ticket sequence")
    )

    class Meta:
        verbose_name = _("machine")
        verbose_name_plural = _("machines")
        ordering = ["casino", "asset_number"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "asset_number"], name="machine_asset_unique_per_casino"),
            models.CheckConstraint(
                condition=Q(status__in=["active", "out_of_service", "retired"]), name="machine_status_valid"
            ),
            models.CheckConstraint(condition=Q(credit_value__gt=0), name="machine_credit_value_positive"),
            models.CheckConstraint(condition=Q(kind__in=["slot", "kiosk"]), name="machine_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.asset_number} ({self.casino.code})"

    @property
    def is_kiosk(self) -> bool:
        return self.kind == self.Kind.KIOSK

    @property
    def has_spoken_to_the_host(self) -> bool:
        return self.last_seen_at is not None or self.last_ticket_sequence > 0

    def clean(self) -> None:
        super().clean()
        if self.pk is None:
            return
        before = Machine.objects.filter(pk=self.pk).values("kind", "last_seen_at", "last_ticket_sequence").first()
        if before and before["kind"] != self.kind and (before["last_seen_at"] or before["last_ticket_sequence"]):
            raise ValidationError(
                {"kind": _("A machine that has worked with the ticket system keeps its kind: register a new one.")}
            )

    @property
    def may_use_ticket_system(self) -> bool:
        return self.status == self.Status.ACTIVE and self.ticket_enrolled


# The machine's stamps and counters move with every request it sends; what it is (its kind, denomination,
# enrolment, key, place on the floor) is configuration.
MACHINE_WORK_FIELDS = ("last_seen_at", "lookups_blocked_until", "last_ticket_sequence")


# Machine contract v1.1, "POST /api/v1/meters": the meters a machine reports (SAS lifetime counters).
TICKET_METERS = ("ticket_out_count", "ticket_out_amount", "ticket_in_count", "ticket_in_amount")
COUNT_METERS = ("ticket_out_count", "ticket_in_count", "handpay_count", "games_played", "attendant_paid_count")
AMOUNT_METERS = (
    "ticket_out_amount",
    "ticket_in_amount",
    "handpay_amount",
    "bills_in_amount",
    "coin_in_amount",
    "coin_out_amount",
    "cash_dispensed_amount",
    "attendant_paid_amount",
)
METER_NAMES = (*COUNT_METERS, *AMOUNT_METERS)
# Decimal(18,3): a lifetime counter of up to 15 whole euro digits, to the mill.
METER_AMOUNT_DIGITS, METER_AMOUNT_PLACES = 18, 3


def _count_meter(label: "StrOrPromise", *, required: bool = False) -> models.BigIntegerField:
    return models.BigIntegerField(null=not required, blank=not required, verbose_name=label)


def _amount_meter(label: "StrOrPromise", *, required: bool = False) -> models.DecimalField:
    return models.DecimalField(
        max_digits=METER_AMOUNT_DIGITS,
        decimal_places=METER_AMOUNT_PLACES,
        null=not required,
        blank=not required,
        verbose_name=label,
    )


class MeterReading(Chained):
    """One meter reading sent by a machine: its lifetime counters at `read_at`.

    Append-only and chained (machines.chains): the reconciliation and the
    count room compare the system's records with these, so a reading does not
    change unseen either. `reset` is set on insert when a counter is lower than in the
    machine's previous reading (by read_at): the meters were cleared (RAM clear
    or rollover), and the reconciliation counts this reading's values from zero.
    The four ticket meters are always present; the others only when sent.
    """

    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="meter_readings", verbose_name=_("machine")
    )
    read_at = models.DateTimeField(verbose_name=_("read at"))
    received_at = models.DateTimeField(verbose_name=_("received at"))
    request_id = models.CharField(max_length=64, verbose_name=_("request id"))
    reset = models.BooleanField(default=False, verbose_name=_("meters reset"))
    ticket_out_count = _count_meter(_("tickets out"), required=True)
    ticket_out_amount = _amount_meter(_("ticket out amount"), required=True)
    ticket_in_count = _count_meter(_("tickets in"), required=True)
    ticket_in_amount = _amount_meter(_("ticket in amount"), required=True)
    handpay_count = _count_meter(_("handpays"))
    handpay_amount = _amount_meter(_("handpay amount"))
    games_played = _count_meter(_("games played"))
    bills_in_amount = _amount_meter(_("bills in amount"))
    coin_in_amount = _amount_meter(_("coin in amount"))
    coin_out_amount = _amount_meter(_("coin out amount"))
    cash_dispensed_amount = _amount_meter(_("cash dispensed amount"))
    # Credits cancelled at the machine for an attendant who paid them by a machine receipt written on the floor
    # (SAS hand-paid cancelled credits); the machine's own handpays are on the handpay meters.
    attendant_paid_count = _count_meter(_("credits paid by an attendant"))
    attendant_paid_amount = _amount_meter(_("credit amount paid by an attendant"))

    journal = "meter_readings"
    journal_casino = "machine__casino_id"
    journal_fields = ("machine_id", "read_at", "received_at", "request_id", "reset", *METER_NAMES)

    class Meta:
        triggers = append_only()
        verbose_name = _("meter reading")
        verbose_name_plural = _("meter readings")
        ordering = ["machine", "read_at", "id"]
        indexes = [models.Index(fields=["machine", "read_at", "id"], name="meterreading_machine_time_idx")]
        constraints = [
            *(
                models.CheckConstraint(condition=Q(**{f"{name}__gte": 0}), name=f"meterreading_{name}_not_negative")
                for name in METER_NAMES
            ),
            chain_link_unique("meterreading"),
        ]

    def __str__(self) -> str:
        return f"{self.machine_id} {self.read_at:%Y-%m-%d %H:%M:%S}{' reset' if self.reset else ''}"

    def meter(self, name: str) -> int | Decimal | None:
        value: int | Decimal | None = getattr(self, name)
        return value


class MeterReconciliation(models.Model):
    """A machine's gaming day, its meters against the system's records: stored by the daily job.

    One row per machine and gaming day (a re-run replaces it). `lines` holds,
    per meter, the meters' change, the system's figure and the difference as
    strings (JSON has no decimals); `differences` counts the meters that differ,
    so the dashboard and the exceptions report read it cheaply.
    """

    class Status(models.TextChoices):
        MATCHED = "matched", _("Matched")
        DIFFERENCE = "difference", _("Difference")
        NO_READING = "no_reading", _("No meter reading")

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="meter_reconciliations", verbose_name=_("casino")
    )
    machine = models.ForeignKey(
        Machine, on_delete=models.PROTECT, related_name="meter_reconciliations", verbose_name=_("machine")
    )
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    status = models.CharField(max_length=16, choices=Status.choices, verbose_name=_("status"))
    differences = models.PositiveSmallIntegerField(default=0, verbose_name=_("differences"))
    lines = models.JSONField(default=list, blank=True, verbose_name=_("lines"))
    reconciled_at = models.DateTimeField(verbose_name=_("reconciled at"))

    class Meta:
        verbose_name = _("meter reconciliation")
        verbose_name_plural = _("meter reconciliations")
        ordering = ["-gaming_day", "machine"]
        indexes = [models.Index(fields=["casino", "gaming_day"], name="meterrecon_casino_day_idx")]
        constraints = [
            models.UniqueConstraint(fields=["machine", "gaming_day"], name="meterrecon_unique_machine_day"),
            models.CheckConstraint(
                condition=Q(status__in=["matched", "difference", "no_reading"]), name="meterrecon_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.machine_id} {self.gaming_day} {self.status}"
