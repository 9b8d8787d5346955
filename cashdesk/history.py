"""The instruments' histories (machines.history): machine receipts and handpays, transfers and their lines."""

from typing import Any

from cashdesk.models import (
    InstrumentChange,
    MachineReceipt,
    MachineReceiptEvent,
    PlaceEvent,
    TrackedPlace,
    Transfer,
    TransferEvent,
    TransferLine,
    TransferLineEvent,
)
from machines.history import ConfigSource, every_casino
from machines.models import Place


def _casinos_of_places(place_field: str) -> Any:
    def casinos(copies: list[Any]) -> dict[int, list[int]]:
        places = dict(
            Place.objects.filter(pk__in={getattr(copy, place_field) for copy in copies}).values_list("pk", "casino_id")
        )
        found = {copy.pk: places.get(getattr(copy, place_field)) for copy in copies}
        return {pk: [casino_id] if casino_id else every_casino() for pk, casino_id in found.items()}

    return casinos


def _casinos_of_lines(copies: list[Any]) -> dict[int, list[int]]:
    transfers = dict(
        Transfer.objects.filter(pk__in={copy.transfer_id for copy in copies}).values_list("pk", "place__casino_id")
    )
    found = {copy.pk: transfers.get(copy.transfer_id) for copy in copies}
    return {pk: [casino_id] if casino_id else every_casino() for pk, casino_id in found.items()}


RECEIPTS = ConfigSource(
    MachineReceiptEvent,
    lambda copies: {copy.pk: [copy.casino_id] for copy in copies},
    lambda casino: MachineReceipt.objects.filter(casino=casino),
    lambda copy: f"{copy.kind} {copy.amount} ({copy.state})",
    InstrumentChange,
)
TRANSFERS = ConfigSource(
    TransferEvent,
    _casinos_of_places("place_id"),
    lambda casino: Transfer.objects.filter(place__casino=casino),
    lambda copy: f"{copy.direction} {copy.amount}",
    InstrumentChange,
)
TRANSFER_LINES = ConfigSource(
    TransferLineEvent,
    _casinos_of_lines,
    lambda casino: TransferLine.objects.filter(transfer__place__casino=casino),
    lambda copy: f"{copy.item} {copy.amount}",
    InstrumentChange,
)
PLACES = ConfigSource(
    PlaceEvent,
    lambda copies: {copy.pk: [copy.casino_id] for copy in copies},
    lambda casino: TrackedPlace.objects.filter(casino=casino),
    lambda copy: f"{copy.kind} {copy.code}",
)
INSTRUMENT_SOURCES = (RECEIPTS, TRANSFERS, TRANSFER_LINES)
# Every history this app provides: the places' goes into the configuration's journal.
CASHDESK_SOURCES = (PLACES, *INSTRUMENT_SOURCES)
