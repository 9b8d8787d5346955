"""Compliance's writes and rules, by topic: persons, self-exclusion, identification, the register, alerts, access."""

from compliance.services.access import access_log_record, identity_mismatch_record, persons_pseudonymise
from compliance.services.alerts import alert_close, alert_review, alerts_evaluate
from compliance.services.base import GENESIS_HASH, PAYOUT_KINDS, PURCHASE_KINDS, IdentificationRefused, PersonError
from compliance.services.identification import Identification, identification_check
from compliance.services.persons import (
    IdentityDetails,
    IdentityMismatch,
    age_on,
    person_document_number,
    person_find,
    person_find_or_create,
    person_personal_code,
    person_resolve,
    personal_code_check,
)
from compliance.services.register import (
    BrokenLink,
    CashOperation,
    DayPurchases,
    register_correct,
    register_entry_write,
    register_hash,
    register_head,
    register_needed,
    register_verify,
)
from compliance.services.self_exclusion import self_exclusion_current, self_exclusion_import, self_exclusion_match

__all__ = [
    "GENESIS_HASH",
    "PAYOUT_KINDS",
    "PURCHASE_KINDS",
    "BrokenLink",
    "CashOperation",
    "DayPurchases",
    "Identification",
    "IdentificationRefused",
    "IdentityDetails",
    "IdentityMismatch",
    "PersonError",
    "access_log_record",
    "age_on",
    "alert_close",
    "alert_review",
    "alerts_evaluate",
    "identification_check",
    "identity_mismatch_record",
    "person_document_number",
    "person_find",
    "person_find_or_create",
    "person_personal_code",
    "person_resolve",
    "personal_code_check",
    "persons_pseudonymise",
    "register_correct",
    "register_entry_write",
    "register_hash",
    "register_head",
    "register_needed",
    "register_verify",
    "self_exclusion_current",
    "self_exclusion_import",
    "self_exclusion_match",
]
