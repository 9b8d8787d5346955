"""The register of persons: an append-only hash chain per casino."""

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from compliance.models import (
    Person,
    RegisterEntry,
)
from compliance.services.base import GENESIS_HASH, PersonError
from compliance.services.identification import Identification
from machines.models import Casino


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
