"""The rules checked before money moves for an identified person."""

import datetime as dt
from dataclasses import dataclass

from django.utils import timezone
from django.utils.translation import gettext as _

from compliance.models import (
    Person,
    SelfExclusionList,
)
from compliance.services.base import PURCHASE_KINDS, IdentificationRefused
from compliance.services.entry import barred
from compliance.services.persons import age_on
from compliance.services.self_exclusion import self_exclusion_current, self_exclusion_match
from machines.models import Casino


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
    Person.objects.filter(pk=person.pk).update(last_seen_at=at)
    current = self_exclusion_current(casino, day)
    excluded = self_exclusion_match(person, current)
    if kind in PURCHASE_KINDS:
        if age_on(person.date_of_birth, day) < casino.minimum_age:
            raise IdentificationRefused(
                "under_age", _("The person is under %(age)s: no purchases.") % {"age": casino.minimum_age}
            )
        if excluded:
            raise IdentificationRefused("self_excluded", _("The person is on the self-exclusion list: no purchases."))
        if barred(casino, person, day) is not None:  # barred since admitted today: the door's rule holds inside
            raise IdentificationRefused("barred", _("The person is barred by the casino: no purchases."))
    return Identification(person=person, exclusion_list=current, self_excluded=excluded)
