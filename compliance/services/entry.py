"""The door (issue 26): every visitor identified at an entrance, 21 or older, not self-excluded, not barred.

The receptionist scans a document's machine-readable zone (`compliance.mrz`) or types a personal code or document
number. A returning visitor is found through the keyed blind indexes (`entry_lookup`); a first visit brings the
document's details. `entry_decide` then decides, in this order, each with its reason: the document expired; under
the casino's minimum age; on the self-exclusion list (matched on the personal code, or on the names with the date of
birth); barred by the casino. Admitted: the person is resolved as at the desk (found, a new document recorded and
the old one kept, or created) and a `Visit` recorded with a visit card number for its barcode. Refused: an
`EntryRefusal` records the reason, naming the person only if already on file, and a self-excluded person's attempt
raises a compliance alert. When the self-exclusion list is older than the casino's setting, the reception fails
closed: only a supervisor's override with a reason admits, and compliance is told.

The receptionist sees the decision, the name and the age: nothing of the register or the person's transactions.
Nothing here logs a personal code, a document number or a name.
"""

import datetime as dt
import secrets
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from compliance import crypto
from compliance.models import (
    Alert,
    Bar,
    BarLift,
    Entrance,
    EntryRefusal,
    Person,
    RefusalReason,
    SelfExclusionEntry,
    Visit,
)
from compliance.services.base import PersonError
from compliance.services.persons import IdentityDetails, age_on, person_find, person_identity_check, person_resolve
from compliance.services.self_exclusion import name_dob_indexes, self_exclusion_current
from machines.models import Casino
from staff.models import StaffAssignment

CARD_DIGITS = 12  # the visit card's number: random digits, no personal data
# The first key of the advisory lock under which one identity is admitted at a time (the second: its blind index).
IDENTITY_LOCK_CLASS = 260_026


class EntryError(PersonError):
    """The reception cannot decide on these details (missing, contradictory, not allowed): the message says why."""


@dataclass(frozen=True)
class ListState:
    """The self-exclusion list the door checks against, and whether it is too old to admit without an override."""

    imported_at: dt.datetime | None
    age_hours: int | None
    stale: bool


@dataclass(frozen=True)
class Override:
    """A supervisor's override of an out-of-date self-exclusion list: who (authenticated at the reception) and why."""

    supervisor: User
    reason: str


@dataclass
class Decision:
    admitted: bool
    reason: str  # a RefusalReason when refused; "list_stale" when an override is needed; "" when admitted
    message: str
    name: str
    age: int | None
    visit: Visit | None = None
    refusal: EntryRefusal | None = None


def receptionist_check(user: User, entrance: Entrance) -> None:
    if not user.has_perm("staff.admit_visitors") or not StaffAssignment.objects.filter(
        user=user, casino_id=entrance.casino_id
    ):
        raise EntryError(_("Only this casino's receptionists admit visitors."))


def list_state(casino: Casino, at: dt.datetime) -> ListState:
    """The self-exclusion list in force and its age: stale when there is none or it is older than the setting."""
    current = self_exclusion_current(casino, timezone.localtime(at, casino.zoneinfo).date())
    if current is None:
        return ListState(imported_at=None, age_hours=None, stale=True)
    hours = int((at - current.imported_at).total_seconds() // 3600)
    return ListState(
        imported_at=current.imported_at, age_hours=hours, stale=hours >= casino.self_exclusion_max_age_hours
    )


def entry_lookup(
    *, personal_code: str = "", document_number: str = "", identity: IdentityDetails | None = None
) -> Person | None:
    """A returning visitor, found in one scan or one typed code or number through the keyed blind indexes."""
    if identity is not None:
        found = person_find(
            personal_code=identity.personal_code,
            document_type=identity.document_type,
            document_number=identity.document_number,
            document_country=identity.document_country,
        )
        if found is not None:
            return found
    if personal_code.strip():
        found = person_find(personal_code=personal_code)
        if found is not None:
            return found
    if document_number.strip():
        matches = list(Person.objects.filter(document_number_index=crypto.blind_index("document", document_number))[:2])
        return matches[0] if len(matches) == 1 else None
    return None


def _self_excluded(casino: Casino, day: dt.date, details: IdentityDetails, person: Person | None) -> bool:
    current = self_exclusion_current(casino, day)
    if current is None:
        return False
    entries = SelfExclusionEntry.objects.filter(exclusion_list=current)
    code_index = person.personal_code_index if person is not None else None
    if not code_index and details.personal_code.strip():
        code_index = crypto.blind_index("personal_code", details.personal_code)
    if code_index and entries.filter(personal_code_index=code_index).exists():
        return True
    # The stored names and the document's both: a person on file is matched as stored and as the document says.
    indexes = []
    if person is not None:
        indexes += name_dob_indexes(person.given_names, person.surnames, person.date_of_birth)
    if details.date_of_birth is not None and details.surnames.strip():
        indexes += name_dob_indexes(details.given_names, details.surnames, details.date_of_birth)
    return bool(indexes) and entries.filter(name_index__in=indexes).exists()


def barred(casino: Casino, person: Person, day: dt.date) -> Bar | None:
    """The casino's bar in force on the person that day, if any."""
    return (
        Bar.objects.filter(casino=casino, person=person, starts_on__lte=day, lift__isnull=True)
        .exclude(ends_on__lt=day)
        .order_by("-barred_at")
        .first()
    )


def _refusal_reason(
    casino: Casino, day: dt.date, details: IdentityDetails, person: Person | None, *, listed: bool
) -> str:
    """The first reason to refuse, in the order the law and the casino's rules give them; "" if none."""
    expiry = details.document_expiry or (person.document_expiry if person is not None else None)
    born = person.date_of_birth if person is not None else details.date_of_birth
    if expiry is None or born is None:
        raise EntryError(_("Scan the document, or type its expiry date and the date of birth."))
    if expiry < day:
        return RefusalReason.DOCUMENT_EXPIRED
    if age_on(born, day) < casino.minimum_age:
        return RefusalReason.UNDER_AGE
    if listed:
        return RefusalReason.SELF_EXCLUDED
    if person is not None and barred(casino, person, day) is not None:
        return RefusalReason.BARRED
    return ""


def _messages(casino: Casino) -> dict[str, str]:
    return {
        RefusalReason.DOCUMENT_EXPIRED: _("The document has expired: ask for a valid one. Not admitted."),
        RefusalReason.UNDER_AGE: _("Under %(age)s: not admitted.") % {"age": casino.minimum_age},
        RefusalReason.SELF_EXCLUDED: _("On the self-exclusion list: not admitted."),
        RefusalReason.BARRED: _("Barred: not admitted."),
    }


def _shown(person: Person | None, details: IdentityDetails, day: dt.date) -> tuple[str, int | None]:
    """What the receptionist sees of the visitor: the name and the age."""
    if person is not None:
        return f"{person.given_names} {person.surnames}", age_on(person.date_of_birth, day)
    born = details.date_of_birth
    return f"{details.given_names} {details.surnames}".strip(), age_on(born, day) if born else None


def _earlier(operation_key: str | None, user: User, casino: Casino, day: dt.date) -> Decision | None:
    """The decision this form's key already recorded: the same form sent twice is decided once."""
    if not operation_key:
        return None
    visit = Visit.objects.select_related("person").filter(operation_key=operation_key).first()
    refusal = EntryRefusal.objects.select_related("person").filter(operation_key=operation_key).first()
    done = visit or refusal
    if done is None:
        return None
    author = visit.admitted_by_id if visit is not None else refusal.refused_by_id if refusal is not None else None
    if author != user.pk:
        raise EntryError(_("This form was already used by someone else."))
    if visit is not None:
        name, age = _shown(visit.person, IdentityDetails(), day)
        return Decision(admitted=True, reason="", message=_("Admitted."), name=name, age=age, visit=visit)
    assert refusal is not None
    name, age = _shown(refusal.person, IdentityDetails(), day)
    message = _messages(casino)[refusal.reason]
    return Decision(admitted=False, reason=refusal.reason, message=message, name=name, age=age, refusal=refusal)


def entry_decide(
    *,
    entrance: Entrance,
    user: User,
    details: IdentityDetails,
    person: Person | None = None,
    override: Override | None = None,
    operation_key: str | None = None,
    at: dt.datetime | None = None,
) -> Decision:
    """Decide on a visitor at the door and record it: a visit, or a refusal with its reason (module docstring)."""
    receptionist_check(user, entrance)
    at = at or timezone.now()
    casino = entrance.casino
    today = timezone.localtime(at, casino.zoneinfo).date()
    with transaction.atomic():
        if person is None and details.given:
            person = entry_lookup(identity=details)  # a document typed or scanned of a person on file: theirs
        _identity_lock(details, person)  # before the key's check: the same form sent twice at once waits here
        earlier = _earlier(operation_key, user, casino, today)
        if earlier is not None:
            return earlier
        if person is not None:
            person = Person.objects.select_for_update().get(pk=person.pk)
            if person.pseudonymised_at is not None:
                raise EntryError(_("This record was pseudonymised: scan the document as for a first visit."))
            if details.given:
                person_identity_check(details, person)  # nothing is decided on a person the document is not
        elif not details.given:
            raise EntryError(_("Scan the document, or type the personal code or the document's number."))
        listed = _self_excluded(casino, today, details, person)
        reason = _refusal_reason(casino, today, details, person, listed=listed)
        name, age = _shown(person, details, today)
        if reason:
            refusal = _refuse(entrance, user, person, reason, at=at, key=operation_key, listed=listed)
            return Decision(False, reason, _messages(casino)[reason], name, age, refusal=refusal)
        state = list_state(casino, at)
        if state.stale and override is None:
            return Decision(False, "list_stale", _stale_message(casino, state), name, age)
        if state.stale and override is not None:
            _override_check(override, user, casino)
        visit = _admit(
            entrance, user, details, person, override=override if state.stale else None, at=at, key=operation_key
        )
        return Decision(True, "", _("Admitted."), name, age, visit=visit)


def _identity_lock(details: IdentityDetails, person: Person | None) -> None:
    """One admission of a person at a time, at every entrance: a transaction-scoped advisory lock on the identity's
    blind index (a first visit has no row to lock yet). SQLite serialises its writers anyway."""
    if connection.vendor != "postgresql":
        return
    if person is not None:
        key = f"person:{person.pk}"
    elif details.personal_code.strip():
        key = crypto.blind_index("personal_code", details.personal_code)
    else:
        key = crypto.blind_index("document", details.document_number)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [IDENTITY_LOCK_CLASS, key])


def _stale_message(casino: Casino, state: ListState) -> str:
    if state.age_hours is None:
        return _("No self-exclusion list is imported: a supervisor's override with a reason is needed to admit.")
    return _(
        "The self-exclusion list is %(hours)s hours old (over %(limit)s): a supervisor's override with a reason is "
        "needed to admit."
    ) % {"hours": state.age_hours, "limit": casino.self_exclusion_max_age_hours}


def _override_check(override: Override, user: User, casino: Casino) -> None:
    supervisor = override.supervisor
    if (
        supervisor.pk == user.pk
        or not supervisor.is_active
        or not supervisor.has_perm("staff.override_entry")
        or not StaffAssignment.objects.filter(user=supervisor, casino=casino).exists()
    ):
        raise EntryError(_("The override is a shift supervisor's of this casino, not the receptionist's."))
    if not override.reason.strip():
        raise EntryError(_("Give the override's reason."))


def _refuse(
    entrance: Entrance,
    user: User,
    person: Person | None,
    reason: str,
    *,
    at: dt.datetime,
    key: str | None,
    listed: bool,
) -> EntryRefusal:
    """The refusal, and compliance's alert when the visitor is on the self-exclusion list, whatever the first
    reason given at the door (an expired document or the age come before it)."""
    casino = entrance.casino
    refusal = EntryRefusal.objects.create(
        casino=casino,
        entrance=entrance,
        person=person,
        reason=reason,
        gaming_day=casino.gaming_day(at),
        refused_by=user,
        refused_at=at,
        operation_key=key or None,
    )
    if listed:
        Alert.objects.create(
            casino=casino,
            kind=Alert.Kind.SELF_EXCLUDED_ENTRY,
            person=person,
            gaming_day=refusal.gaming_day,
            details={"entrance": entrance.name, "refusal": refusal.pk},
            created_at=at,
        )
    return refusal


def _admit(
    entrance: Entrance,
    user: User,
    details: IdentityDetails,
    person: Person | None,
    *,
    override: Override | None,
    at: dt.datetime,
    key: str | None,
) -> Visit:
    """The person resolved as at the desk (a new document recorded, the old one kept; or created), and the visit."""
    casino = entrance.casino
    if details.given:
        person = person_resolve(details, at=at, casino=casino)
    assert person is not None  # a visitor with no details is refused above
    Person.objects.filter(pk=person.pk).update(last_seen_at=at)
    for _attempt in range(3):
        try:
            with transaction.atomic():
                visit = Visit.objects.create(
                    casino=casino,
                    entrance=entrance,
                    person=person,
                    gaming_day=casino.gaming_day(at),
                    admitted_by=user,
                    admitted_at=at,
                    card="".join(secrets.choice("0123456789") for _digit in range(CARD_DIGITS)),
                    override_by=override.supervisor if override else None,
                    override_reason=override.reason.strip() if override else "",
                    operation_key=key or None,
                )
            break
        except IntegrityError:
            twin = Visit.objects.filter(operation_key=key).first() if key else None
            if twin is not None and twin.admitted_by_id == user.pk:
                return twin  # the same form, sent twice at once: the first admission is the answer
            if twin is not None:
                raise EntryError(_("This form was already used by someone else.")) from None
    else:
        raise EntryError(_("The visit could not be recorded just now; try again."))
    if override is not None:
        Alert.objects.create(
            casino=casino,
            kind=Alert.Kind.ENTRY_OVERRIDE,
            person=person,
            gaming_day=visit.gaming_day,
            details={"entrance": entrance.name, "visit": visit.pk, "reason": visit.override_reason},
            created_at=at,
        )
    return visit


def _manager_check(user: User, casino: Casino) -> None:
    if not user.has_perm("staff.bar_persons") or not StaffAssignment.objects.filter(user=user, casino=casino):
        raise EntryError(_("Only this casino's managers bar persons and lift bars."))


def bar_person(
    *,
    casino: Casino,
    person: Person,
    user: User,
    reason: str,
    starts_on: dt.date,
    ends_on: dt.date | None = None,
) -> Bar:
    """A manager bars a person from the casino: from a day, until a day or open-ended, with the reason."""
    _manager_check(user, casino)
    if not reason.strip():
        raise EntryError(_("Give the bar's reason."))
    if ends_on is not None and ends_on < starts_on:
        raise EntryError(_("A bar ends on or after the day it starts."))
    if person.pseudonymised_at is not None:
        raise EntryError(_("This record was pseudonymised: identify the person again first."))
    return Bar.objects.create(
        casino=casino,
        person=person,
        reason=reason.strip()[:255],
        starts_on=starts_on,
        ends_on=ends_on,
        barred_by=user,
        barred_at=timezone.now(),
    )


def bar_lift(*, bar: Bar, user: User, reason: str) -> BarLift:
    """A manager lifts a bar, with the reason; a bar is lifted once (the database keeps one lift per bar)."""
    _manager_check(user, bar.casino)
    if not reason.strip():
        raise EntryError(_("Give the reason the bar is lifted."))
    try:
        with transaction.atomic():
            return BarLift.objects.create(
                bar=bar, reason=reason.strip()[:255], lifted_by=user, lifted_at=timezone.now()
            )
    except IntegrityError:
        raise EntryError(_("This bar is lifted already.")) from None


# The desk's side of the door: a purchase for cash is linked to an admitted visitor (the day's total).


def visit_of_card(*, casino: Casino, card: str, at: dt.datetime) -> Visit:
    """Today's visit with this visit card (scanned, or picked from today's visitors), with its person.

    Raises EntryError: a card nobody was admitted with at this casino, or one from another gaming day.
    """
    card = card.strip()
    visit = None
    if card.isascii() and card.isdigit() and len(card) <= CARD_DIGITS:
        visit = Visit.objects.select_related("person").filter(casino=casino, card=card).first()
    if visit is None:
        raise EntryError(_("No visitor was admitted with this visit card: scan it again or pick the visitor."))
    if visit.gaming_day != casino.gaming_day(at):
        raise EntryError(_("This visit card is from another gaming day: the visitor goes through the reception again."))
    return visit


def visitors_today(casino: Casino, at: dt.datetime, limit: int = 1000) -> list[Visit]:
    """Today's admissions at the casino, the latest first, each with what the desk's pick shows of its person: the
    name, the document's type and validity, the date of birth (for the age). Only those are read: every
    encrypted field read is decrypted, and a busy day's list has hundreds of visitors (bench/README.md)."""
    shown = ("given_names", "surnames", "date_of_birth", "document_type", "document_expiry")
    visits = (
        Visit.objects.filter(casino=casino, gaming_day=casino.gaming_day(at))
        .select_related("person")
        .only("card", "admitted_at", "person", *(f"person__{name}" for name in shown))
    )
    return list(visits.order_by("-admitted_at", "-pk")[:limit])


def admitted_today(*, casino: Casino, person: Person, at: dt.datetime) -> bool:
    """Whether the person came in through the door this gaming day (the desk flags one who did not)."""
    return Visit.objects.filter(casino=casino, person=person, gaming_day=casino.gaming_day(at)).exists()
