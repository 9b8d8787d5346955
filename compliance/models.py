from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from casino_office.triggers import append_only
from casino_office.vocabulary import KIND_LISTS
from compliance.fields import EncryptedDateField, EncryptedTextField
from machines.models import Casino, Chained, chain_link_unique, tracked


class Person(models.Model):
    """A person identified at the cash desk (casino rules §1: the register of persons).

    Every personal detail is stored only encrypted (compliance.crypto): names,
    date of birth, nationality, address and the document's expiry through the
    encrypted fields (compliance.fields), read as plain values; the personal
    code and the document number, with a keyed blind index for exact search,
    read through compliance.services. The document's type and issuing country
    stay plain: with the number's blind index they are the document's unique key.
    """

    class DocumentType(models.TextChoices):
        PASSPORT = "passport", _("Passport")
        ID_CARD = "id_card", _("Identity card")
        RESIDENCE_PERMIT = "residence_permit", _("Residence permit")
        DRIVING_LICENCE = "driving_licence", _("Driving licence")

    given_names = EncryptedTextField(max_length=120, verbose_name=_("given names"))
    surnames = EncryptedTextField(max_length=120, verbose_name=_("surnames"))
    date_of_birth = EncryptedDateField(verbose_name=_("date of birth"))
    nationality = EncryptedTextField(
        max_length=2, default="LT", help_text=_("ISO 3166-1 alpha-2"), verbose_name=_("nationality")
    )
    personal_code_encrypted = models.TextField(blank=True, editable=False, verbose_name=_("personal code encrypted"))
    personal_code_index = models.CharField(  # noqa: DJ001 - unique when set
        max_length=64, null=True, blank=True, editable=False, verbose_name=_("personal code index")
    )
    document_type = models.CharField(max_length=24, choices=DocumentType.choices, verbose_name=_("document type"))
    document_number_encrypted = models.TextField(
        blank=True, editable=False, verbose_name=_("document number encrypted")
    )
    document_number_index = models.CharField(  # noqa: DJ001 - unique when set
        max_length=64, null=True, blank=True, editable=False, verbose_name=_("document number index")
    )
    document_country = models.CharField(
        max_length=2, default="LT", help_text=_("ISO 3166-1 alpha-2"), verbose_name=_("document country")
    )
    document_expiry = EncryptedDateField(null=True, blank=True, verbose_name=_("document expiry"))
    address = EncryptedTextField(max_length=255, blank=True, verbose_name=_("address"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    pseudonymised_at = models.DateTimeField(null=True, blank=True, verbose_name=_("pseudonymised at"))
    # When the person was last identified at a desk: the retention job's clock for persons with no register entry.
    last_seen_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last seen at"))

    class Meta:
        verbose_name = _("person")
        verbose_name_plural = _("persons")
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


class PersonVersion(Chained):
    """A person's stored data as it was written (chained, append-only): a person's row changes only with a new
    version, so a row changed by anyone else (a renamed person, a swapped document) is unlike its last version.

    `digest` is the SHA-256 of the person's stored columns and replaced documents as stored (tokens, blind
    indexes): no personal data, not even encrypted, so a pseudonymised person's old data does not outlive its
    retention here, and the check needs no key. The version's own MAC (the chain's) makes the digest unforgeable.
    The versions of a person go into the chain of the casino where they were written.
    """

    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="versions", verbose_name=_("person"))
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    version = models.PositiveIntegerField(verbose_name=_("version"))
    digest = models.CharField(max_length=64, verbose_name=_("digest"))
    reason = models.CharField(max_length=24, verbose_name=_("reason"))
    written_at = models.DateTimeField(verbose_name=_("written at"))

    journal = "persons"
    journal_casino = "casino_id"
    journal_fields = ("person_id", "casino_id", "version", "digest", "reason", "written_at")

    class Meta:
        triggers = append_only()
        verbose_name = _("person version")
        verbose_name_plural = _("person versions")
        constraints = [
            chain_link_unique("personversion"),
            models.UniqueConstraint(fields=["person", "version"], name="personversion_one_per_number"),
        ]

    def __str__(self) -> str:
        return f"person {self.person_id} v{self.version}"


class PersonDocument(models.Model):
    """An identity document a person showed before the current one: kept when a new document replaces it."""

    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="documents", verbose_name=_("person"))
    document_type = models.CharField(
        max_length=24, choices=Person.DocumentType.choices, verbose_name=_("document type")
    )
    document_number_encrypted = models.TextField(blank=True, verbose_name=_("document number encrypted"))
    document_country = models.CharField(max_length=2, verbose_name=_("document country"))
    document_expiry = EncryptedDateField(null=True, blank=True, verbose_name=_("document expiry"))
    replaced_at = models.DateTimeField(verbose_name=_("replaced at"))

    class Meta:
        verbose_name = _("previous document")
        verbose_name_plural = _("previous documents")

    def __str__(self) -> str:
        return f"document of person {self.person_id} replaced {self.replaced_at:%Y-%m-%d}"


class SelfExclusionList(models.Model):
    """The regulator's list of persons who restricted their own gambling, as imported on a date.

    Only blind indexes of its entries are stored: enough to match, nothing to read.
    """

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="self_exclusion_lists", verbose_name=_("casino")
    )
    list_date = models.DateField(
        help_text=_("The date the regulator's list is valid from."), verbose_name=_("list date")
    )
    source_name = models.CharField(max_length=255, verbose_name=_("source name"))
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("imported by")
    )
    imported_at = models.DateTimeField(auto_now_add=True, verbose_name=_("imported at"))
    entry_count = models.PositiveIntegerField(verbose_name=_("entry count"))

    class Meta:
        verbose_name = _("self exclusion list")
        verbose_name_plural = _("self exclusion lists")
        ordering = ["-list_date", "-imported_at"]

    def __str__(self) -> str:
        return f"Self-exclusion list of {self.list_date} ({self.entry_count})"


class SelfExclusionEntry(models.Model):
    exclusion_list = models.ForeignKey(
        SelfExclusionList, on_delete=models.CASCADE, related_name="entries", verbose_name=_("exclusion list")
    )
    personal_code_index = models.CharField(
        max_length=64, blank=True, db_index=True, verbose_name=_("personal code index")
    )
    name_index = models.CharField(
        max_length=64, blank=True, db_index=True, help_text=_("Names with date of birth."), verbose_name=_("name index")
    )

    class Meta:
        verbose_name = _("self exclusion entry")
        verbose_name_plural = _("self exclusion entries")

    def __str__(self) -> str:
        return f"entry {self.pk} of list {self.exclusion_list_id}"


# The register's kinds are the desk's kinds that identify a person (casino_office.vocabulary), with their labels.
# The functional form of TextChoices, which django-stubs does not type; nothing names a member.
RegisterKind: type[models.TextChoices] = models.TextChoices(  # type: ignore[call-overload]
    "RegisterKind", [(value.upper(), (value, label)) for value, label in KIND_LISTS.register_choices]
)


class RegisterEntry(models.Model):
    """One line of the register of persons ("Asmenų registracijos žurnalas"), per casino.

    Append-only (database triggers) and chained: `entry_hash` covers the
    entry's content and the previous entry's hash, so an edited row breaks
    the chain (`manage.py verify_register`). The hash is an HMAC under a key
    the database does not hold (`key_id` names it; compliance.crypto), so
    even its administrator cannot recompute the chain; the daily anchors
    kept outside the database catch a deleted tail. Entries written before
    the chain was keyed have no `key_id` and a plain SHA-256 hash; a
    RegisterSeal covers them. Personal data is not hashed (it lives on the
    Person), so retention can pseudonymise it without breaking the chain;
    the money figures stay.
    """

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="register_entries", verbose_name=_("casino")
    )
    sequence = models.PositiveIntegerField(verbose_name=_("sequence"))
    person = models.ForeignKey(
        Person, on_delete=models.PROTECT, related_name="register_entries", verbose_name=_("person")
    )
    kind = models.CharField(max_length=20, choices=RegisterKind.choices, verbose_name=_("kind"))
    amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    desk = models.ForeignKey(
        "machines.Place", on_delete=models.PROTECT, related_name="register_entries", verbose_name=_("desk")
    )
    # The desk's shift and transaction, kept as values: the register sits below the cash desk and keeps what its
    # reports need (place, cashier, amount, kind), so it refers to nothing above it.
    shift_id = models.BigIntegerField(null=True, blank=True, verbose_name=_("shift"))
    cashier = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("cashier")
    )
    transaction_id = models.BigIntegerField(null=True, blank=True, unique=True, verbose_name=_("transaction"))
    corrects = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="corrections", verbose_name=_("corrects")
    )
    note = models.CharField(max_length=255, blank=True, verbose_name=_("note"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    self_exclusion_list = models.ForeignKey(
        SelfExclusionList,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("self exclusion list"),
    )
    self_excluded = models.BooleanField(
        help_text=_("On the self-exclusion list current at identification."), verbose_name=_("self excluded")
    )
    # Issue 26, the day's total: a purchase entered because the person's purchases over the gaming day passed the
    # threshold carries that total (this purchase included) and the earlier purchases it passed with (their
    # transactions' ids, none of them in the register: each was under the threshold). Null on other entries.
    day_total = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("gaming day's purchases")
    )
    earlier_transactions = models.JSONField(default=list, blank=True, verbose_name=_("earlier purchases"))
    previous_hash = models.CharField(max_length=64, verbose_name=_("previous hash"))
    entry_hash = models.CharField(max_length=64, unique=True, verbose_name=_("entry hash"))
    key_id = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text=_("The chain key that signed the entry; empty before the chain was keyed."),
        verbose_name=_("chain key"),
    )
    # The person's data as the entry used it (compliance.checks: a version of the entry's person).
    person_version = models.ForeignKey(
        PersonVersion,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("person version"),
    )

    class Meta:
        triggers = append_only()
        verbose_name = _("register entry")
        verbose_name_plural = _("register entries")
        ordering = ["casino", "sequence"]
        permissions = [
            ("view_personal_data", "See full personal data and export it (compliance officer)"),
            ("manage_alerts", "Review and close compliance alerts"),
            ("import_self_exclusion", "Import the self-exclusion list"),
        ]
        indexes = [models.Index(fields=["casino", "gaming_day"], name="register_casino_day_idx")]
        constraints = [
            models.UniqueConstraint(fields=["casino", "sequence"], name="register_sequence_unique_per_casino"),
            models.CheckConstraint(condition=Q(kind__in=RegisterKind.values), name="register_kind_valid"),
            models.CheckConstraint(
                condition=Q(transaction_id__isnull=False) | Q(corrects__isnull=False),
                name="register_has_transaction_or_corrects",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.casino_id}#{self.sequence} {self.kind} {self.amount}"


class RegisterSeal(models.Model):
    """The keyed seal over a casino's entries written before the chain was keyed.

    Written once, by the migration that keyed the chain (compliance 0007):
    entries 1..count carry no key and end at `head`; the signature (under a
    chain key) fixes both. Verification accepts unkeyed entries only up to a
    seal's count, so nobody can pass a recomputed chain off as unkeyed.
    Append-only, like the register.
    """

    casino = models.OneToOneField(
        Casino, on_delete=models.PROTECT, related_name="register_seal", verbose_name=_("casino")
    )
    count = models.PositiveIntegerField(verbose_name=_("entries sealed"))
    head = models.CharField(max_length=64, verbose_name=_("head"))
    key_id = models.CharField(max_length=16, verbose_name=_("chain key"))
    signature = models.CharField(max_length=64, verbose_name=_("signature"))
    sealed_at = models.DateTimeField(verbose_name=_("sealed at"))

    class Meta:
        triggers = append_only()
        verbose_name = _("register seal")
        verbose_name_plural = _("register seals")

    def __str__(self) -> str:
        return f"{self.casino_id} 1..{self.count}"


class Alert(models.Model):
    class Kind(models.TextChoices):
        DUE_DILIGENCE = "due_diligence", _("Person's day reached the due-diligence threshold")
        FCIS_REPORT = "fcis_report", _("Person's day reached the cash-operation report threshold")
        STRUCTURING_DESK = "structuring_desk", _("Several transactions just under the threshold at one desk")
        STRUCTURING_MACHINE = "structuring_machine", _("Tickets of one machine cashed just under the threshold")
        STRUCTURING_CASINO = (
            "structuring_casino",
            _("Unidentified operations just under the threshold at the casino's desks and kiosks, together above it"),
        )
        SELF_EXCLUDED_PAYOUT = "self_excluded_payout", _("Payout to a self-excluded person")
        BOOKS_BROKEN = "books_broken", _("The books' verification found a record that does not hold")
        # The door (issue 26).
        SELF_EXCLUDED_ENTRY = "self_excluded_entry", _("A self-excluded person tried to enter")
        ENTRY_OVERRIDE = "entry_override", _("Admitted on a supervisor's override: the self-exclusion list was old")

    class Status(models.TextChoices):
        OPEN = "open", _("Open")
        IN_REVIEW = "in_review", _("In review")
        CLOSED = "closed", _("Closed")

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="alerts", verbose_name=_("casino"))
    kind = models.CharField(max_length=24, choices=Kind.choices, verbose_name=_("kind"))
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.OPEN, verbose_name=_("status"))
    person = models.ForeignKey(
        Person, on_delete=models.PROTECT, null=True, blank=True, related_name="alerts", verbose_name=_("person")
    )
    desk = models.ForeignKey(
        "machines.Place", on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("desk")
    )
    machine = models.ForeignKey(
        "machines.Machine", on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("machine")
    )
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    amount = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True, verbose_name=_("amount"))
    details = models.JSONField(default=dict, blank=True, verbose_name=_("details"))
    created_at = models.DateTimeField(verbose_name=_("created at"))
    handled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("handled by"),
    )
    note = models.TextField(blank=True, verbose_name=_("note"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))

    class Meta:
        verbose_name = _("alert")
        verbose_name_plural = _("alerts")
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

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("user")
    )
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    action = models.CharField(max_length=8, choices=Action.choices, verbose_name=_("action"))
    what = models.CharField(max_length=255, verbose_name=_("what"))
    # The same as data, shown in the reader's language: {"kind": "register" | "register_export" |
    # "person" | "fcis", ...}. Entries written before it existed have {} and show `what`.
    subject = models.JSONField(default=dict, blank=True, verbose_name=_("subject"))
    purpose = models.CharField(max_length=255, verbose_name=_("purpose"))
    at = models.DateTimeField(auto_now_add=True, verbose_name=_("at"))
    ip_address = models.GenericIPAddressField(null=True, blank=True, verbose_name=_("ip address"))

    class Meta:
        triggers = append_only()
        verbose_name = _("access log entry")
        verbose_name_plural = _("access log entries")
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.user} {self.action} {self.what}"


# --- The door (issue 26): entrances, visits, refusals and the casino's own bars -------------------------------------


class Entrance(models.Model):
    """One of a casino's entrances, where a receptionist identifies every visitor before admitting them."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="entrances", verbose_name=_("casino"))
    code = models.CharField(max_length=16, verbose_name=_("code"))
    name = models.CharField(max_length=120, verbose_name=_("name"))

    class Meta:
        verbose_name = _("entrance")
        verbose_name_plural = _("entrances")
        constraints = [models.UniqueConstraint(fields=["casino", "code"], name="entrance_code_unique")]

    def __str__(self) -> str:
        return self.name


# The entrances are the casino's configuration: each change copied by a trigger and sealed into its casino's chain
# (machines.history; compliance.config_history names the source).
EntranceEvent = tracked(Entrance, "EntranceEvent")


class Visit(models.Model):
    """A visitor admitted at an entrance: the person identified, by whom and when (append-only).

    `card` is the number the visit card's barcode carries: random digits, no personal data. An admission made while
    the self-exclusion list was out of date names the supervisor who overrode the check, and why.
    """

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    entrance = models.ForeignKey(Entrance, on_delete=models.PROTECT, related_name="visits", verbose_name=_("entrance"))
    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="visits", verbose_name=_("person"))
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    admitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("admitted by")
    )
    admitted_at = models.DateTimeField(verbose_name=_("admitted at"))
    card = models.CharField(max_length=16, unique=True, verbose_name=_("visit card"))
    override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("override by"),
    )
    override_reason = models.CharField(max_length=255, blank=True, verbose_name=_("override reason"))
    operation_key = models.CharField(max_length=64, null=True, blank=True, unique=True, verbose_name=_("operation key"))

    class Meta:
        triggers = append_only()
        verbose_name = _("visit")
        verbose_name_plural = _("visits")
        indexes = [models.Index(fields=["casino", "gaming_day"], name="visit_casino_day")]
        constraints = [
            models.CheckConstraint(
                condition=Q(override_by__isnull=True, override_reason="")
                | (Q(override_by__isnull=False) & ~Q(override_reason="") & ~Q(override_by=models.F("admitted_by"))),
                name="visit_override_by_another_with_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"visit {self.pk} on {self.gaming_day}"


class RefusalReason(models.TextChoices):
    """Why a visitor is refused at the door, in the order the reception checks them."""

    DOCUMENT_EXPIRED = "document_expired", _("Document expired")
    UNDER_AGE = "under_age", _("Under the minimum age")
    SELF_EXCLUDED = "self_excluded", _("On the self-exclusion list")
    BARRED = "barred", _("Barred by the casino")


class EntryRefusal(models.Model):
    """A visitor refused at an entrance, with the reason (append-only). It names a person only when the person was
    on file already: a refusal records nothing of a stranger beyond the reason and the moment."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    entrance = models.ForeignKey(
        Entrance, on_delete=models.PROTECT, related_name="refusals", verbose_name=_("entrance")
    )
    person = models.ForeignKey(
        Person,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="entry_refusals",
        verbose_name=_("person"),
    )
    reason = models.CharField(max_length=24, choices=RefusalReason.choices, verbose_name=_("reason"))
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    refused_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("refused by")
    )
    refused_at = models.DateTimeField(verbose_name=_("refused at"))
    operation_key = models.CharField(max_length=64, null=True, blank=True, unique=True, verbose_name=_("operation key"))

    class Meta:
        triggers = append_only()
        verbose_name = _("entry refusal")
        verbose_name_plural = _("entry refusals")
        indexes = [models.Index(fields=["casino", "gaming_day"], name="refusal_casino_day")]
        constraints = [
            models.CheckConstraint(
                condition=Q(reason__in=RefusalReason.values),
                name="entryrefusal_reason_known",
            ),
        ]

    def __str__(self) -> str:
        return f"refusal {self.pk}: {self.reason}"


class Bar(models.Model):
    """A person barred by the casino (not the regulator's list): from a day, until a day or open-ended, with the
    reason; lifted only by a `BarLift` (append-only both: every bar and every lift stays on record)."""

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    person = models.ForeignKey(Person, on_delete=models.PROTECT, related_name="bars", verbose_name=_("person"))
    reason = models.CharField(max_length=255, verbose_name=_("reason"))
    starts_on = models.DateField(verbose_name=_("from"))
    ends_on = models.DateField(null=True, blank=True, verbose_name=_("until"))
    barred_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("barred by")
    )
    barred_at = models.DateTimeField(verbose_name=_("barred at"))

    class Meta:
        triggers = append_only()
        verbose_name = _("bar")
        verbose_name_plural = _("bars")
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="bar_has_reason"),
            models.CheckConstraint(
                condition=Q(ends_on__isnull=True) | Q(ends_on__gte=models.F("starts_on")), name="bar_ends_after_start"
            ),
        ]

    def __str__(self) -> str:
        return f"bar {self.pk} from {self.starts_on}"


class BarLift(models.Model):
    """A bar lifted by a manager, with the reason (append-only; one per bar)."""

    bar = models.OneToOneField(Bar, on_delete=models.PROTECT, related_name="lift", verbose_name=_("bar"))
    reason = models.CharField(max_length=255, verbose_name=_("reason"))
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("lifted by")
    )
    lifted_at = models.DateTimeField(verbose_name=_("lifted at"))

    class Meta:
        triggers = append_only()
        verbose_name = _("bar lift")
        verbose_name_plural = _("bar lifts")
        constraints = [models.CheckConstraint(condition=~Q(reason=""), name="barlift_has_reason")]

    def __str__(self) -> str:
        return f"lift of bar {self.bar_id}"
