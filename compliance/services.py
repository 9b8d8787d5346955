"""Identification, the self-exclusion list, the register with its hash chain, alerts, the access log, retention."""

import csv
import datetime as dt
import hashlib
import io
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from stdnum.exceptions import ValidationError as StdnumError
from stdnum.lt import asmens

from compliance import crypto
from compliance.history import operation_history
from compliance.models import (
    AccessLogEntry,
    Alert,
    Person,
    PersonDocument,
    RegisterEntry,
    SelfExclusionEntry,
    SelfExclusionList,
)
from machines.models import Casino

GENESIS_HASH = "0" * 64
# The desk's kinds as compliance's rules see them (casino rules §1: chips and slot tokens alike).
PURCHASE_KINDS = frozenset({"chips_buy", "ticket_sale", "tokens_buy", "smartcard_load"})
PAYOUT_KINDS = frozenset({"ticket_payout", "receipt_payout", "smartcard_payout", "chips_cashout", "tokens_cashout"})


class PersonError(ValueError):
    """Identity details that cannot be accepted; the message is shown as it is."""


class IdentificationRefused(Exception):
    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(message)


# --- Persons ---------------------------------------------------------------


def personal_code_check(code: str, date_of_birth: dt.date | None) -> str:
    """A Lithuanian asmens kodas: its checksum, and the date of birth it encodes."""
    try:
        compact = asmens.validate(code)
    except StdnumError:
        raise PersonError(_("The personal code (asmens kodas) is not valid: check the digits.")) from None
    try:
        encoded = asmens.get_birth_date(compact)
    except StdnumError:
        encoded = None  # codes issued without a birth date (first digit 9) carry none to compare
    if encoded is not None and date_of_birth is not None and encoded != date_of_birth:
        raise PersonError(
            _("The personal code gives the date of birth %(encoded)s, not %(given)s.")
            % {"encoded": f"{encoded:%Y-%m-%d}", "given": f"{date_of_birth:%Y-%m-%d}"}
        )
    return str(compact)


def person_find(
    *, personal_code: str = "", document_type: str = "", document_number: str = "", document_country: str = "LT"
) -> Person | None:
    """Exact search through the blind indexes: by personal code, or by identity document."""
    if personal_code.strip():
        found = Person.objects.filter(personal_code_index=crypto.blind_index("personal_code", personal_code)).first()
        if found is not None:
            return found
    if document_number.strip() and document_type:
        return Person.objects.filter(
            document_country=(document_country or "LT").upper(),
            document_type=document_type,
            document_number_index=crypto.blind_index("document", document_number),
        ).first()
    return None


def person_find_or_create(
    *,
    document_type: str = "",
    document_number: str = "",
    document_country: str = "LT",
    personal_code: str = "",
    given_names: str = "",
    surnames: str = "",
    date_of_birth: dt.date | None = None,
    nationality: str = "LT",
    document_expiry: dt.date | None = None,
    address: str = "",
) -> Person:
    """A returning person by personal code or document; otherwise a new one, if every detail is given."""
    existing = person_find(
        personal_code=personal_code,
        document_type=document_type,
        document_number=document_number,
        document_country=document_country,
    )
    if existing is not None:
        return existing
    number = crypto.normalise(document_number)
    if document_type not in Person.DocumentType.values or not number:
        raise PersonError(_("Enter the identity document's type and number."))
    if not (given_names.strip() and surnames.strip() and date_of_birth and document_expiry):
        raise PersonError(
            _("New person: enter names, date of birth and the document's expiry date as in the document.")
        )
    nationality = (nationality or "LT").upper()
    code = ""
    if personal_code.strip():
        code = personal_code_check(personal_code, date_of_birth)
    elif nationality == "LT":
        raise PersonError(_("Lithuanian citizens are identified with their personal code (asmens kodas)."))
    try:
        with transaction.atomic():
            return Person.objects.create(
                given_names=given_names.strip(),
                surnames=surnames.strip(),
                date_of_birth=date_of_birth,
                nationality=nationality,
                personal_code_encrypted=crypto.encrypt(code) if code else "",
                personal_code_index=crypto.blind_index("personal_code", code) if code else None,
                document_type=document_type,
                document_number_encrypted=crypto.encrypt(number),
                document_number_index=crypto.blind_index("document", number),
                document_country=(document_country or "LT").upper(),
                document_expiry=document_expiry,
                address=address.strip(),
            )
    except IntegrityError:
        raise PersonError(_("This personal code belongs to a person registered with another document.")) from None


@dataclass(frozen=True)
class IdentityDetails:
    """What the cashier typed from the identity document: plain values, resolved inside the money's transaction."""

    personal_code: str = ""
    document_type: str = ""
    document_number: str = ""
    document_country: str = "LT"
    given_names: str = ""
    surnames: str = ""
    date_of_birth: dt.date | None = None
    nationality: str = "LT"
    document_expiry: dt.date | None = None
    address: str = ""

    @property
    def given(self) -> bool:
        return bool(self.personal_code.strip() or self.document_number.strip())


class IdentityMismatch(PersonError):
    """The personal code or document belongs to a stored person whose name or birth date differ."""


def _same_text(typed: str, stored: str) -> bool:
    return " ".join(typed.split()).casefold() == " ".join(stored.split()).casefold()


def person_resolve(identity: IdentityDetails, *, at: dt.datetime | None = None) -> Person:
    """The person these details name: found, updated with a new document, or created.

    Call inside the transaction that moves the money: if it is refused, no
    personal data stays behind. A code or document typed with a name or birth
    date that differ from the stored person's is refused, not booked to them;
    a new document replaces the stored one and the old one is kept.
    """
    at = at or timezone.now()
    existing = person_find(
        personal_code=identity.personal_code,
        document_type=identity.document_type,
        document_number=identity.document_number,
        document_country=identity.document_country,
    )
    if existing is None:
        return person_find_or_create(
            personal_code=identity.personal_code,
            document_type=identity.document_type,
            document_number=identity.document_number,
            document_country=identity.document_country,
            given_names=identity.given_names,
            surnames=identity.surnames,
            date_of_birth=identity.date_of_birth,
            nationality=identity.nationality,
            document_expiry=identity.document_expiry,
            address=identity.address,
        )
    person = Person.objects.select_for_update().get(pk=existing.pk)
    if (
        (identity.given_names.strip() and not _same_text(identity.given_names, person.given_names))
        or (identity.surnames.strip() and not _same_text(identity.surnames, person.surnames))
        or (identity.date_of_birth is not None and identity.date_of_birth != person.date_of_birth)
        or (
            identity.personal_code.strip()
            and person.personal_code_index
            and crypto.blind_index("personal_code", crypto.normalise(identity.personal_code))
            != person.personal_code_index
        )
    ):
        raise IdentityMismatch(
            _(
                "This personal code or document is registered to a person with another name or date of birth. "
                "Check the document; if the stored record is wrong, ask a compliance officer."
            )
        )
    number = crypto.normalise(identity.document_number)
    new_document = (
        number
        and identity.document_type in Person.DocumentType.values
        and crypto.blind_index("document", number) != person.document_number_index
    )
    if new_document:
        if identity.document_expiry is None:
            raise PersonError(_("New document: enter its expiry date as in the document."))
        PersonDocument.objects.create(
            person=person,
            document_type=person.document_type,
            document_number_encrypted=person.document_number_encrypted,
            document_country=person.document_country,
            document_expiry=person.document_expiry,
            replaced_at=at,
        )
        person.document_type = identity.document_type
        person.document_number_encrypted = crypto.encrypt(number)
        person.document_number_index = crypto.blind_index("document", number)
        person.document_country = (identity.document_country or "LT").upper()
        person.document_expiry = identity.document_expiry
        try:
            with transaction.atomic():
                person.save(
                    update_fields=[
                        "document_type",
                        "document_number_encrypted",
                        "document_number_index",
                        "document_country",
                        "document_expiry",
                    ]
                )
        except IntegrityError:
            raise PersonError(_("This document is registered to another person.")) from None
    elif identity.document_expiry is not None and (
        person.document_expiry is None or identity.document_expiry > person.document_expiry
    ):
        # The same document, seen again with its expiry read anew.
        Person.objects.filter(pk=person.pk).update(document_expiry=identity.document_expiry)
        person.document_expiry = identity.document_expiry
    return person


def person_personal_code(person: Person) -> str:
    return crypto.decrypt(person.personal_code_encrypted)


def person_document_number(person: Person) -> str:
    return crypto.decrypt(person.document_number_encrypted)


def age_on(date_of_birth: dt.date, day: dt.date) -> int:
    years = day.year - date_of_birth.year
    if (day.month, day.day) < (date_of_birth.month, date_of_birth.day):
        years -= 1
    return years


# --- Self-exclusion ----------------------------------------------------------


def _name_index(given_names: str, surnames: str, date_of_birth: dt.date) -> str:
    return crypto.blind_index("name_dob", f"{given_names}|{surnames}|{date_of_birth.isoformat()}")


def self_exclusion_current(casino: Casino, day: dt.date) -> SelfExclusionList | None:
    return (
        SelfExclusionList.objects.filter(casino=casino, list_date__lte=day)
        .order_by("-list_date", "-imported_at")
        .first()
    )


def self_exclusion_match(person: Person, exclusion_list: SelfExclusionList | None) -> bool:
    if exclusion_list is None:
        return False
    entries = SelfExclusionEntry.objects.filter(exclusion_list=exclusion_list)
    by_name = entries.filter(name_index=_name_index(person.given_names, person.surnames, person.date_of_birth))
    if person.personal_code_index and entries.filter(personal_code_index=person.personal_code_index).exists():
        return True
    return by_name.exists()


def self_exclusion_import(
    *, casino: Casino, user: User, data: bytes, list_date: dt.date, source_name: str
) -> SelfExclusionList:
    """Import the regulator's CSV (personal_code, or given_names + surnames + date_of_birth); all or nothing."""
    if not user.has_perm("compliance.import_self_exclusion"):
        raise PersonError(_("Only compliance officers import the self-exclusion list."))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PersonError(_("The file is not UTF-8 text.")) from None
    reader = csv.DictReader(io.StringIO(text))
    fields = set(reader.fieldnames or [])
    if not ({"personal_code"} <= fields or {"given_names", "surnames", "date_of_birth"} <= fields):
        raise PersonError(_("Columns needed: personal_code, or given_names, surnames and date_of_birth."))
    entries: list[SelfExclusionEntry] = []
    for line, row in enumerate(reader, start=2):
        code = (row.get("personal_code") or "").strip()
        code_index = ""
        if code:
            try:
                code_index = crypto.blind_index("personal_code", asmens.validate(code))
            except StdnumError:
                raise PersonError(_("Line %(line)s: the personal code is not valid.") % {"line": line}) from None
        name_index = ""
        names = [(row.get(key) or "").strip() for key in ("given_names", "surnames", "date_of_birth")]
        if all(names):
            try:
                born = dt.date.fromisoformat(names[2])
            except ValueError:
                raise PersonError(_("Line %(line)s: the date of birth must be YYYY-MM-DD.") % {"line": line}) from None
            name_index = _name_index(names[0], names[1], born)
        if not code_index and not name_index:
            raise PersonError(
                _("Line %(line)s: give a personal code, or names with the date of birth.") % {"line": line}
            )
        entries.append(SelfExclusionEntry(personal_code_index=code_index, name_index=name_index))
    if not entries:
        raise PersonError(_("The file has no entries."))
    with transaction.atomic():
        imported = SelfExclusionList.objects.create(
            casino=casino,
            list_date=list_date,
            source_name=source_name[:255],
            imported_by=user,
            entry_count=len(entries),
        )
        for entry in entries:
            entry.exclusion_list = imported
        SelfExclusionEntry.objects.bulk_create(entries, batch_size=2000)
    return imported


# --- Identification at the desk -----------------------------------------------


@dataclass(frozen=True)
class Identification:
    person: Person
    exclusion_list: SelfExclusionList | None
    self_excluded: bool


def identification_check(*, person: Person, kind: str, casino: Casino, at: dt.datetime) -> Identification:
    """The rules before money moves (DOMAIN.md: identity document, 21+, self-exclusion)."""
    day = timezone.localtime(at, casino.zoneinfo).date()
    if person.pseudonymised_at is not None:
        raise IdentificationRefused("pseudonymised", _("This record was pseudonymised; identify the person again."))
    if person.document_expiry is None or person.document_expiry < day:
        raise IdentificationRefused("document_expired", _("The identity document has expired; ask for a valid one."))
    current = self_exclusion_current(casino, day)
    excluded = self_exclusion_match(person, current)
    if kind in PURCHASE_KINDS:
        if age_on(person.date_of_birth, day) < casino.minimum_age:
            raise IdentificationRefused(
                "under_age", _("The person is under %(age)s: no purchases.") % {"age": casino.minimum_age}
            )
        if excluded:
            raise IdentificationRefused("self_excluded", _("The person is on the self-exclusion list: no purchases."))
    return Identification(person=person, exclusion_list=current, self_excluded=excluded)


# --- The register ----------------------------------------------------------------


def register_hash(entry: RegisterEntry) -> str:
    content = {
        "casino": entry.casino_id,
        "sequence": entry.sequence,
        "person": entry.person_id,
        "kind": entry.kind,
        "amount": str(Decimal(entry.amount).quantize(Decimal("0.01"))),
        "desk": entry.desk_id,
        "shift": entry.shift_id,
        "cashier": entry.cashier_id,
        "transaction": entry.transaction_id,
        "corrects": entry.corrects_id,
        "note": entry.note,
        "created_at": entry.created_at.astimezone(dt.UTC).isoformat(timespec="microseconds"),
        "gaming_day": entry.gaming_day.isoformat(),
        "self_exclusion_list": entry.self_exclusion_list_id,
        "self_excluded": entry.self_excluded,
        "previous_hash": entry.previous_hash,
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _append(entry: RegisterEntry) -> RegisterEntry:
    """Chain and insert an entry. Locks the casino row: one writer per casino's chain at a time."""
    Casino.objects.select_for_update().filter(pk=entry.casino_id).first()
    last = (
        RegisterEntry.objects.filter(casino_id=entry.casino_id)
        .order_by("-sequence")
        .values("sequence", "entry_hash")
        .first()
    )
    entry.sequence = (last["sequence"] if last else 0) + 1
    entry.previous_hash = last["entry_hash"] if last else GENESIS_HASH
    entry.entry_hash = register_hash(entry)
    entry.save(force_insert=True)
    return entry


@dataclass(frozen=True)
class CashOperation:
    """A cash-desk transaction as compliance sees it: plain values the desk passes in."""

    casino: Casino
    kind: str
    amount: Decimal
    at: dt.datetime
    transaction_id: int
    desk_id: int
    shift_id: int | None
    cashier_id: int
    ticket_machine_id: int | None = None


def register_entry_write(*, operation: CashOperation, identification: Identification) -> RegisterEntry:
    """The register line of a cash-desk transaction; call inside the transaction that moves the money."""
    casino = operation.casino
    return _append(
        RegisterEntry(
            casino=casino,
            person=identification.person,
            kind=operation.kind,
            amount=operation.amount,
            desk_id=operation.desk_id,
            shift_id=operation.shift_id,
            cashier_id=operation.cashier_id,
            transaction_id=operation.transaction_id,
            created_at=operation.at,
            gaming_day=casino.gaming_day(operation.at),
            self_exclusion_list=identification.exclusion_list,
            self_excluded=identification.self_excluded,
        )
    )


def register_correct(
    *, entry: RegisterEntry, user: User, note: str, person: Person | None = None, amount: Decimal | None = None
) -> RegisterEntry:
    """A correction is a new entry that references the one it corrects; the original stays."""
    if not user.has_perm("compliance.manage_alerts"):
        raise PersonError(_("Only compliance officers correct the register."))
    if not note.strip():
        raise PersonError(_("Say what the correction corrects."))
    now = timezone.now()
    with transaction.atomic():
        return _append(
            RegisterEntry(
                casino=entry.casino,
                person=person or entry.person,
                kind=entry.kind,
                amount=amount if amount is not None else entry.amount,
                desk_id=entry.desk_id,
                shift_id=entry.shift_id,
                cashier_id=user.pk,
                corrects=entry,
                note=note[:255],
                created_at=now,
                gaming_day=entry.gaming_day,
                self_exclusion_list=entry.self_exclusion_list,
                self_excluded=entry.self_excluded,
            )
        )


@dataclass(frozen=True)
class BrokenLink:
    sequence: int
    reason: str


def register_verify(casino: Casino) -> BrokenLink | None:
    """Recompute the chain; the first entry whose hash or link does not hold, or None."""
    previous = GENESIS_HASH
    expected_sequence = 1
    for entry in RegisterEntry.objects.filter(casino=casino).order_by("sequence").iterator(chunk_size=2000):
        if entry.sequence != expected_sequence:
            return BrokenLink(expected_sequence, f"entry {expected_sequence} is missing")
        if entry.previous_hash != previous:
            return BrokenLink(entry.sequence, "its previous_hash does not match the entry before it")
        if register_hash(entry) != entry.entry_hash:
            return BrokenLink(entry.sequence, "its content does not match its hash (edited)")
        previous = entry.entry_hash
        expected_sequence += 1
    return None


def register_head(casino: Casino) -> str:
    last = (
        RegisterEntry.objects.filter(casino=casino).order_by("-sequence").values_list("entry_hash", flat=True).first()
    )
    return last or GENESIS_HASH


# --- Alerts ------------------------------------------------------------------------


def _raise_alert(**fields: Any) -> Alert | None:
    try:
        with transaction.atomic():
            return Alert.objects.create(created_at=timezone.now(), **fields)
    except IntegrityError:
        return None  # this person's day already has the alert


def alerts_evaluate(*, operation: CashOperation, identification: Identification | None) -> list[Alert]:
    """Linked-day totals, self-excluded payouts and structuring; inside the money's transaction.

    The desk's other transactions are read through the operation history the
    project configures (compliance never imports the desk).
    """
    history = operation_history()
    casino = operation.casino
    day = casino.gaming_day(operation.at)
    raised: list[Alert] = []
    if identification is not None:
        begin, finish = casino.gaming_day_bounds(day)
        total = history.person_total(casino=casino, person_id=identification.person.pk, since=begin, until=finish)
        for kind, threshold in (
            (Alert.Kind.DUE_DILIGENCE, casino.due_diligence_threshold),
            (Alert.Kind.FCIS_REPORT, casino.fcis_report_threshold),
        ):
            if total >= threshold:
                alert = _raise_alert(
                    casino=casino,
                    kind=kind,
                    person=identification.person,
                    gaming_day=day,
                    amount=total,
                    details={"transaction": operation.transaction_id, "threshold": str(threshold)},
                )
                if alert:
                    raised.append(alert)
        if identification.self_excluded and operation.kind in PAYOUT_KINDS:
            alert = _raise_alert(
                casino=casino,
                kind=Alert.Kind.SELF_EXCLUDED_PAYOUT,
                person=identification.person,
                gaming_day=day,
                amount=operation.amount,
                desk_id=operation.desk_id,
                details={"transaction": operation.transaction_id},
            )
            if alert:
                raised.append(alert)
    low = (casino.identity_threshold * casino.structuring_ratio).quantize(Decimal("0.01"))
    if operation.kind in PURCHASE_KINDS | PAYOUT_KINDS and low <= operation.amount <= casino.identity_threshold:
        window = dt.timedelta(minutes=casino.structuring_window_minutes)
        near = history.desk_amounts(
            desk_id=operation.desk_id,
            low=low,
            high=casino.identity_threshold,
            since=operation.at - window,
            until=operation.at,
        )
        recent_alert = Alert.objects.filter(
            kind=Alert.Kind.STRUCTURING_DESK, desk_id=operation.desk_id, created_at__gt=timezone.now() - window
        ).exists()
        if len(near) >= casino.structuring_count and not recent_alert:
            alert = _raise_alert(
                casino=casino,
                kind=Alert.Kind.STRUCTURING_DESK,
                desk_id=operation.desk_id,
                gaming_day=day,
                amount=sum((amount for _pk, amount in near), Decimal("0")),
                details={"transactions": sorted(pk for pk, _amount in near)},
            )
            if alert:
                raised.append(alert)
        machine_id = operation.ticket_machine_id if operation.kind == "ticket_payout" else None
        if machine_id is not None:
            machine_window = dt.timedelta(hours=casino.machine_structuring_window_hours)
            cashed = history.machine_ticket_amounts(
                casino=casino,
                machine_id=machine_id,
                low=low,
                high=casino.identity_threshold,
                since=operation.at - machine_window,
                until=operation.at,
            )
            recent_machine_alert = Alert.objects.filter(
                kind=Alert.Kind.STRUCTURING_MACHINE,
                machine_id=machine_id,
                created_at__gt=timezone.now() - machine_window,
            ).exists()
            if len(cashed) >= casino.structuring_count and not recent_machine_alert:
                alert = _raise_alert(
                    casino=casino,
                    kind=Alert.Kind.STRUCTURING_MACHINE,
                    machine_id=machine_id,
                    gaming_day=day,
                    amount=sum((amount for _pk, amount in cashed), Decimal("0")),
                    details={"transactions": sorted(pk for pk, _amount in cashed)},
                )
                if alert:
                    raised.append(alert)
    return raised


def alert_review(*, alert: Alert, user: User) -> Alert:
    if not user.has_perm("compliance.manage_alerts"):
        raise PersonError(_("Only compliance officers handle alerts."))
    updated = Alert.objects.filter(pk=alert.pk, status=Alert.Status.OPEN).update(
        status=Alert.Status.IN_REVIEW, handled_by=user
    )
    if not updated:
        raise PersonError(_("Only an open alert can be taken into review."))
    return Alert.objects.get(pk=alert.pk)


def alert_close(*, alert: Alert, user: User, note: str) -> Alert:
    if not user.has_perm("compliance.manage_alerts"):
        raise PersonError(_("Only compliance officers handle alerts."))
    if not note.strip():
        raise PersonError(_("Close an alert with a note on what was done."))
    updated = (
        Alert.objects.filter(pk=alert.pk)
        .exclude(status=Alert.Status.CLOSED)
        .update(status=Alert.Status.CLOSED, handled_by=user, note=note.strip(), closed_at=timezone.now())
    )
    if not updated:
        raise PersonError(_("This alert is already closed."))
    return Alert.objects.get(pk=alert.pk)


# --- Access log and retention ---------------------------------------------------------------


def access_log_record(
    *,
    user: User,
    casino: Casino,
    action: str,
    what: str,
    purpose: str,
    ip_address: str | None = None,
    subject: dict[str, Any] | None = None,
) -> None:
    AccessLogEntry.objects.create(
        user=user,
        casino=casino,
        action=action,
        what=what[:255],
        subject=subject or {},
        purpose=purpose[:255] or "(none stated)",
        ip_address=ip_address,
    )


def persons_pseudonymise(*, now: dt.datetime | None = None) -> int:
    """Pseudonymise persons whose every register entry is past their casino's retention period.

    Names, codes, document and address go; the register's entries and their
    amounts stay, still chained (the hash covers no personal data).
    """
    now = now or timezone.now()
    done = 0
    candidates = Person.objects.filter(pseudonymised_at__isnull=True, register_entries__isnull=False).distinct()
    for person in candidates.iterator():
        entries = person.register_entries.select_related("casino")
        if any(entry.created_at > _years_before(now, entry.casino.register_retention_years) for entry in entries):
            continue
        with transaction.atomic():
            Person.objects.filter(pk=person.pk, pseudonymised_at__isnull=True).update(
                given_names="—",
                surnames=f"PSEUDONYM-{hashlib.sha256(f'{person.pk}'.encode()).hexdigest()[:12]}",
                date_of_birth=dt.date(person.date_of_birth.year, 1, 1),
                personal_code_encrypted="",
                personal_code_index=None,
                document_number_encrypted="",
                document_number_index=None,
                document_expiry=None,
                address="",
                pseudonymised_at=now,
            )
        done += 1
    return done


def _years_before(moment: dt.datetime, years: int) -> dt.datetime:
    try:
        return moment.replace(year=moment.year - years)
    except ValueError:  # 29 February
        return moment.replace(year=moment.year - years, day=28)
