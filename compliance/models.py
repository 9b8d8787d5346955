from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from machines.models import Casino


class Person(models.Model):
    """A person identified at the cash desk (casino rules §1: the register of persons).

    The personal code and the document number are stored only encrypted, with a
    keyed blind index for exact search (compliance.crypto); read them through
    compliance.services.
    """

    class DocumentType(models.TextChoices):
        PASSPORT = "passport", _("Passport")
        ID_CARD = "id_card", _("Identity card")
        RESIDENCE_PERMIT = "residence_permit", _("Residence permit")
        DRIVING_LICENCE = "driving_licence", _("Driving licence")

    given_names = models.CharField(max_length=120)
    surnames = models.CharField(max_length=120)
    date_of_birth = models.DateField()
    nationality = models.CharField(max_length=2, default="LT", help_text="ISO 3166-1 alpha-2")
    personal_code_encrypted = models.TextField(blank=True, editable=False)
    personal_code_index = models.CharField(max_length=64, null=True, blank=True, editable=False)  # noqa: DJ001 - unique when set
    document_type = models.CharField(max_length=24, choices=DocumentType.choices)
    document_number_encrypted = models.TextField(blank=True, editable=False)
    document_number_index = models.CharField(max_length=64, null=True, blank=True, editable=False)  # noqa: DJ001 - unique when set
    document_country = models.CharField(max_length=2, default="LT", help_text="ISO 3166-1 alpha-2")
    document_expiry = models.DateField(null=True, blank=True)
    address = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    pseudonymised_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document_country", "document_type", "document_number_index"],
                condition=Q(document_number_index__isnull=False),
                name="person_document_unique",
            ),
            models.UniqueConstraint(
                fields=["personal_code_index"],
                condition=Q(personal_code_index__isnull=False),
                name="person_personal_code_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.given_names} {self.surnames}"

    @property
    def initials(self) -> str:
        """What a cashier needs to recognise the person without seeing the full record."""
        return f"{self.given_names[:1]}. {self.surnames}"


class SelfExclusionList(models.Model):
    """The regulator's list of persons who restricted their own gambling, as imported on a date.

    Only blind indexes of its entries are stored: enough to match, nothing to read.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="self_exclusion_lists")
    list_date = models.DateField(help_text="The date the regulator's list is valid from.")
    source_name = models.CharField(max_length=255)
    imported_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    imported_at = models.DateTimeField(auto_now_add=True)
    entry_count = models.PositiveIntegerField()

    class Meta:
        ordering = ["-list_date", "-imported_at"]

    def __str__(self) -> str:
        return f"Self-exclusion list of {self.list_date} ({self.entry_count})"


class SelfExclusionEntry(models.Model):
    exclusion_list = models.ForeignKey(SelfExclusionList, on_delete=models.CASCADE, related_name="entries")
    personal_code_index = models.CharField(max_length=64, blank=True, db_index=True)
    name_index = models.CharField(max_length=64, blank=True, db_index=True, help_text="Names with date of birth.")

    def __str__(self) -> str:
        return f"entry {self.pk} of list {self.exclusion_list_id}"


class RegisterKind(models.TextChoices):
    CHIPS_BUY = "chips_buy", _("Cash to chips")
    TICKET_SALE = "ticket_sale", _("Ticket sale")
    TICKET_PAYOUT = "ticket_payout", _("Ticket payout")
    RECEIPT_PAYOUT = "receipt_payout", _("Machine receipt payout")
    SMARTCARD_PAYOUT = "smartcard_payout", _("Smart-card payout")
    CHIPS_CASHOUT = "chips_cashout", _("Chips to cash")


class RegisterEntry(models.Model):
    """One line of the register of persons ("Asmenų registracijos žurnalas"), per casino.

    Append-only (database triggers) and chained: `entry_hash` covers the
    entry's content and the previous entry's hash, so an edited row breaks
    the chain (`manage.py verify_register`). Personal data is not hashed (it
    lives on the Person), so retention can pseudonymise it without breaking
    the chain; the money figures stay.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="register_entries")
    sequence = models.PositiveIntegerField()
    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="register_entries")
    kind = models.CharField(max_length=20, choices=RegisterKind.choices)
    amount = models.DecimalField(max_digits=12, decimal_places=2)
    desk = models.ForeignKey("cashdesk.CashDesk", on_delete=models.PROTECT, related_name="register_entries")
    shift = models.ForeignKey("cashdesk.Shift", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    cashier = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    transaction = models.OneToOneField(
        "cashdesk.CashTransaction", on_delete=models.PROTECT, null=True, blank=True, related_name="register_entry"
    )
    corrects = models.ForeignKey("self", on_delete=models.PROTECT, null=True, blank=True, related_name="corrections")
    note = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField()
    gaming_day = models.DateField()
    self_exclusion_list = models.ForeignKey(
        SelfExclusionList, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    self_excluded = models.BooleanField(help_text="On the self-exclusion list current at identification.")
    previous_hash = models.CharField(max_length=64)
    entry_hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["casino", "sequence"]
        verbose_name_plural = "register entries"
        permissions = [
            ("view_personal_data", "See full personal data (compliance officer, manager)"),
            ("manage_alerts", "Review and close compliance alerts"),
            ("import_self_exclusion", "Import the self-exclusion list"),
        ]
        indexes = [models.Index(fields=["casino", "gaming_day"], name="register_casino_day_idx")]
        constraints = [
            models.UniqueConstraint(fields=["casino", "sequence"], name="register_sequence_unique_per_casino"),
            models.CheckConstraint(condition=Q(kind__in=RegisterKind.values), name="register_kind_valid"),
            models.CheckConstraint(
                condition=Q(transaction__isnull=False) | Q(corrects__isnull=False),
                name="register_has_transaction_or_corrects",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.casino_id}#{self.sequence} {self.kind} {self.amount}"


class Alert(models.Model):
    class Kind(models.TextChoices):
        DUE_DILIGENCE = "due_diligence", _("Person's day reached the due-diligence threshold")
        FCIS_REPORT = "fcis_report", _("Person's day reached the cash-operation report threshold")
        STRUCTURING_DESK = "structuring_desk", _("Several transactions just under the threshold at one desk")
        STRUCTURING_MACHINE = "structuring_machine", _("Tickets of one machine cashed just under the threshold")
        SELF_EXCLUDED_PAYOUT = "self_excluded_payout", _("Payout to a self-excluded person")

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        IN_REVIEW = "in_review", _("In review")
        CLOSED = "closed", _("Closed")

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="alerts")
    kind = models.CharField(max_length=24, choices=Kind.choices)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN)
    person = models.ForeignKey(Person, on_delete=models.PROTECT, null=True, blank=True, related_name="alerts")
    desk = models.ForeignKey("cashdesk.CashDesk", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    machine = models.ForeignKey("machines.Machine", on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    gaming_day = models.DateField()
    amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    note = models.TextField(blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["status", "-created_at"]
        constraints = [
            # One day-threshold alert per person and gaming day.
            models.UniqueConstraint(
                fields=["casino", "kind", "person", "gaming_day"],
                condition=Q(kind__in=["due_diligence", "fcis_report"]),
                name="alert_one_threshold_alert_per_person_day",
            ),
            models.CheckConstraint(
                condition=~Q(status="closed")
                | (Q(closed_at__isnull=False) & Q(handled_by__isnull=False) & ~Q(note="")),
                name="alert_closed_with_note",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.get_status_display()})"


class AccessLogEntry(models.Model):
    """Every view, search and export of personal data: who, when, what, and the stated purpose."""

    class Action(models.TextChoices):
        VIEW = "view", _("View")
        SEARCH = "search", _("Search")
        EXPORT = "export", _("Export")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=8, choices=Action.choices)
    what = models.CharField(max_length=255)
    # The same as data, shown in the reader's language: {"kind": "register" | "register_export" |
    # "person" | "fcis", ...}. Entries written before it existed have {} and show `what`.
    subject = models.JSONField(default=dict, blank=True)
    purpose = models.CharField(max_length=255)
    at = models.DateTimeField(auto_now_add=True)
    ip_address = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.user} {self.action} {self.what}"
