"""The cash desk's models, by topic."""

from cashdesk.models.books import CashTransaction, Counterparty, Leg, TransactionKind
from cashdesk.models.count_room import (
    BoxTally,
    DifferenceReason,
    DroppedBox,
    DropRun,
    GamingDayAdjustment,
    GamingDayClose,
)
from cashdesk.models.counts import CountRequest
from cashdesk.models.desks import Shift, ShiftCount, ShiftCountLine
from cashdesk.models.history import (
    InstrumentChange,
    MachineReceiptEvent,
    PlaceEvent,
    TrackedPlace,
    TransferEvent,
    TransferLineEvent,
)
from cashdesk.models.instruments import (
    CHECK_CODE_TRIES,
    HANDPAY_KINDS,
    CheckCodeFailure,
    CheckCodeUnlock,
    HoldCase,
    MachineReceipt,
    ReversalRequest,
    SmartCardRead,
)
from cashdesk.models.snapshots import LiabilitySnapshot
from cashdesk.models.tables import ColourChips, TableBuyIn, TablePlaces, TableSession, TableSlip, TableSlipSeries
from cashdesk.models.transfers import Transfer, TransferLine
from casino_office.vocabulary import (
    APPROVED_KINDS,
    CASH_IN_KINDS,
    COUNTERPARTY_OF_KIND,
    IDENTITY_KINDS,
    KIOSK_KINDS,
    PURCHASE_KINDS,
)

__all__ = [
    "APPROVED_KINDS",
    "CASH_IN_KINDS",
    "CHECK_CODE_TRIES",
    "COUNTERPARTY_OF_KIND",
    "HANDPAY_KINDS",
    "IDENTITY_KINDS",
    "KIOSK_KINDS",
    "PURCHASE_KINDS",
    "BoxTally",
    "CashTransaction",
    "CheckCodeFailure",
    "CheckCodeUnlock",
    "ColourChips",
    "CountRequest",
    "Counterparty",
    "DifferenceReason",
    "DropRun",
    "DroppedBox",
    "GamingDayAdjustment",
    "GamingDayClose",
    "HoldCase",
    "InstrumentChange",
    "Leg",
    "LiabilitySnapshot",
    "MachineReceipt",
    "MachineReceiptEvent",
    "PlaceEvent",
    "ReversalRequest",
    "Shift",
    "ShiftCount",
    "ShiftCountLine",
    "SmartCardRead",
    "TableBuyIn",
    "TablePlaces",
    "TableSession",
    "TableSlip",
    "TableSlipSeries",
    "TrackedPlace",
    "TransactionKind",
    "Transfer",
    "TransferEvent",
    "TransferLine",
    "TransferLineEvent",
]
