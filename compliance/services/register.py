"""The register of persons: an append-only chain per casino, keyed so that its database cannot forge it.

Each entry's hash is an HMAC (compliance.crypto) of its content and the
previous entry's hash, under a key from the environment. Entries written
before the chain was keyed carry no key id and a plain SHA-256 hash; the
RegisterSeal written by the keying migration fixes how many there were and
their head. What the database administrator can still do, cut the chain
short, is caught by the anchors kept outside the database
(compliance.services.anchors).
"""

import datetime as dt
import hashlib
import hmac
import json
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from compliance import crypto
from compliance.models import (
    Person,
    RegisterEntry,
    RegisterSeal,
)
from compliance.services.base import GENESIS_HASH, IDENTITY_KINDS, PURCHASE_KINDS, PersonError
from compliance.services.identification import Identification
from compliance.services.person_versions import person_version_last
from machines.chains import Finding
from machines.models import Casino


def _canonical(content: dict[str, object]) -> bytes:
    return json.dumps(content, sort_keys=True, separators=(",", ":")).encode()


def register_message(entry: RegisterEntry) -> bytes:
    """What an entry's hash covers: its content, the previous hash and (once keyed) the key's id."""
    content: dict[str, object] = {
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
    if entry.day_total is not None:  # issue 26; entries without a day's total hash as they always did
        content["day_total"] = str(Decimal(entry.day_total).quantize(Decimal("0.01")))
        content["earlier_transactions"] = [int(pk) for pk in entry.earlier_transactions]
    if not entry.key_id:
        return _canonical(content)  # as the chain was hashed before it was keyed
    return b"register-entry\n" + _canonical({**content, "key_id": entry.key_id})


def register_hash(entry: RegisterEntry) -> str:
    """The entry's hash: HMAC under the key it names, or plain SHA-256 for an entry from before keying.

    Raises crypto.UnknownRegisterKey when the key it names is not configured.
    """
    if not entry.key_id:
        return hashlib.sha256(register_message(entry)).hexdigest()
    return crypto.register_mac(entry.key_id, register_message(entry))


def register_seal_signature(*, casino_id: int, count: int, head: str, key_id: str) -> str:
    """The signature of a seal over a casino's unkeyed entries 1..count ending at `head`."""
    message = b"register-seal\n" + _canonical({"casino": casino_id, "count": count, "head": head, "key_id": key_id})
    return crypto.register_mac(key_id, message)


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
    entry.key_id = crypto.register_signing_key_id()
    entry.entry_hash = register_hash(entry)
    entry.person_version_id = person_version_last(entry.person_id)
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
    cashier_id: int | None  # None: a kiosk's own transaction
    ticket_machine_id: int | None = None


@dataclass(frozen=True)
class DayPurchases:
    """A person's earlier purchases for cash in the gaming day, as the desk's books hold them (issue 26)."""

    transaction_ids: tuple[int, ...]
    total: Decimal


def register_needed(*, casino: Casino, kind: str, amount: Decimal, day: DayPurchases | None) -> bool:
    """Whether the transaction goes in the register: identity kinds over the threshold on their own, and a
    purchase whose gaming day's purchases by the same person pass it (the regulator counts the day, not the
    transaction)."""
    if kind not in IDENTITY_KINDS:
        return False
    if amount > casino.identity_threshold:
        return True
    return kind in PURCHASE_KINDS and day is not None and day.total + amount > casino.identity_threshold


def register_entry_write(
    *, operation: CashOperation, identification: Identification, day: DayPurchases | None = None
) -> RegisterEntry:
    """The register line of a cash-desk transaction; call inside the transaction that moves the money.

    A purchase entered for its gaming day's total (`day`) carries that total and, when it is the one that passed the
    threshold, the earlier purchases it passed with."""
    if operation.cashier_id is None:  # a kiosk identifies nobody: its payouts stay under the threshold
        raise ValueError("a register entry names the cashier who identified the person")
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
            **_day_fields(operation, day),
        )
    )


def _day_fields(operation: CashOperation, day: DayPurchases | None) -> dict[str, object]:
    if day is None or operation.kind not in PURCHASE_KINDS:
        return {}
    passed_here = day.total <= operation.casino.identity_threshold
    return {
        "day_total": day.total + operation.amount,
        "earlier_transactions": list(day.transaction_ids) if passed_here else [],
    }


def register_correct(
    *, entry: RegisterEntry, user: User, note: str, person: Person | None = None, amount: Decimal | None = None
) -> RegisterEntry:
    """A correction is a new entry that references the one it corrects; the original stays."""
    if not user.has_perm("compliance.manage_alerts"):
        raise PersonError(_("Only compliance officers correct the register."))
    if not note.strip():
        raise PersonError(_("Say what the correction corrects."))
    now = timezone.now()
    amount = amount if amount is not None else entry.amount
    # An entry written for its gaming day's total stays one: the total moves with a corrected amount.
    day_total = entry.day_total - entry.amount + amount if entry.day_total is not None else None
    with transaction.atomic():
        return _append(
            RegisterEntry(
                casino=entry.casino,
                person=person or entry.person,
                kind=entry.kind,
                amount=amount,
                day_total=day_total,
                earlier_transactions=list(entry.earlier_transactions),
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


def _seal_check(seal: RegisterSeal) -> str | None:
    try:
        expected = register_seal_signature(
            casino_id=seal.casino_id, count=seal.count, head=seal.head, key_id=seal.key_id
        )
    except crypto.UnknownRegisterKey:
        return f"the seal over the unkeyed entries is signed with key {seal.key_id}, which is not configured"
    if not hmac.compare_digest(expected, seal.signature):
        return "the seal over the unkeyed entries does not hold (forged or edited)"
    return None


def _entry_check(entry: RegisterEntry, *, unkeyed_until: int) -> str | None:
    if entry.sequence <= unkeyed_until:
        if entry.key_id:
            return "it is keyed, but the seal says it was written before the chain was keyed"
    elif not entry.key_id:
        return "it carries no chain key and no seal covers it (written behind the application's back)"
    try:
        expected = register_hash(entry)
    except crypto.UnknownRegisterKey:
        return f"it is signed with key {entry.key_id}, which is not configured (REGISTER_CHAIN_KEYS)"
    if not hmac.compare_digest(expected, entry.entry_hash):
        return "its content does not match its hash (edited)"
    return None


def register_verify(casino: Casino) -> BrokenLink | None:
    """Recompute the chain; the first entry whose hash or link does not hold, or None.

    Unkeyed entries pass only as far as the casino's seal reaches, and the
    last of them must be the sealed head.
    """
    seal = RegisterSeal.objects.filter(casino=casino).first()
    unkeyed_until = 0
    if seal is not None:
        if (reason := _seal_check(seal)) is not None:
            return BrokenLink(seal.count, reason)
        unkeyed_until = seal.count
    previous = GENESIS_HASH
    expected_sequence = 1
    for entry in RegisterEntry.objects.filter(casino=casino).order_by("sequence").iterator(chunk_size=2000):
        if entry.sequence != expected_sequence:
            return BrokenLink(expected_sequence, f"entry {expected_sequence} is missing")
        if entry.previous_hash != previous:
            return BrokenLink(entry.sequence, "its previous_hash does not match the entry before it")
        if (reason := _entry_check(entry, unkeyed_until=unkeyed_until)) is not None:
            return BrokenLink(entry.sequence, reason)
        if seal is not None and entry.sequence == seal.count and entry.entry_hash != seal.head:
            return BrokenLink(entry.sequence, "it is not the head sealed when the chain was keyed (rewritten)")
        previous = entry.entry_hash
        expected_sequence += 1
    if expected_sequence <= unkeyed_until:
        return BrokenLink(expected_sequence, f"entry {expected_sequence} is missing")
    return None


def register_head(casino: Casino) -> str:
    last = (
        RegisterEntry.objects.filter(casino=casino).order_by("-sequence").values_list("entry_hash", flat=True).first()
    )
    return last or GENESIS_HASH


class RegisterChain:
    """The register as one of the books' chains (machines.chains.OTHER_CHAINS): verified and anchored with them."""

    name = "register"

    def end(self, casino: Casino) -> tuple[int, str]:
        last = RegisterEntry.objects.filter(casino=casino).order_by("-sequence").values_list("sequence", "entry_hash")
        found = last.first()
        return (int(found[0]), str(found[1])) if found else (0, GENESIS_HASH)

    def mac_at(self, casino: Casino, sequence: int) -> str | None:
        found = RegisterEntry.objects.filter(casino=casino, sequence=sequence).values_list("entry_hash", flat=True)
        return found.first()

    def verify(self, casino: Casino, since: tuple[int, str] | None = None) -> list[Finding]:
        link = register_verify(casino)  # always whole: the register is small, and its seal is checked at its start
        return [] if link is None else [Finding(casino.code, f"register entry {link.sequence}", link.reason)]


REGISTER_CHAIN = RegisterChain()
