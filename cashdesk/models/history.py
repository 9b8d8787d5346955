"""The instruments' history: every change of a machine receipt (a handpay too) and of a transfer, chained.

A database trigger (django-pghistory) copies the row at each insert, change and delete, whoever sends the
statement; each copy is sealed into the casino's `instruments` journal (machines.history), by the service
that made the change in its own transaction, or by the next anchoring. `verify_books` names a receipt or a
transfer that is not as its last copy says (changed with the triggers off).
"""

from django.utils.translation import gettext_lazy as _

from cashdesk.models.instruments import MachineReceipt
from cashdesk.models.transfers import Transfer, TransferLine
from casino_office.triggers import append_only
from machines.models import Place, RecordedChange, recorded_change_meta, tracked


class InstrumentChange(RecordedChange):
    """One change of a machine receipt, a handpay or a transfer, sealed (append-only)."""

    journal = "instruments"

    class Meta:
        verbose_name = _("instrument change")
        verbose_name_plural = _("instrument changes")
        ordering = ["-changed_at", "-id"]
        triggers = append_only()
        constraints = recorded_change_meta("instrumentchange")["constraints"]
        indexes = recorded_change_meta("instrumentchange")["indexes"]


class TrackedPlace(Place):
    """The casino's places (machines.Place), tracked from here: their table is this app's (`cashdesk_cashdesk`)."""

    class Meta:
        proxy = True
        verbose_name = _("place")


# A desk's receipt and ticket counters move with its work; its name, kind and cash limits are configuration.
PlaceEvent = tracked(TrackedPlace, "PlaceEvent", exclude=("last_receipt_number", "last_ticket_sequence"))
# A receipt's count of wrong check codes and its lock move with each attempt (CheckCodeFailure keeps them). Its
# check code, the secret printed on it, is not copied into a history kept for ever.
MachineReceiptEvent = tracked(
    MachineReceipt, "MachineReceiptEvent", exclude=("wrong_codes", "code_locked_at", "check_code")
)
TransferEvent = tracked(Transfer, "TransferEvent")
TransferLineEvent = tracked(TransferLine, "TransferLineEvent")
