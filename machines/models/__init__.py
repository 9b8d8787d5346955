"""The bottom layer's models: the casino with its rules, its machines and the places that hold its value."""

from machines.models.chains import GENESIS_MAC, BooksVerification, Chained, ChainHead, chain_link_unique
from machines.models.floor import (
    AMOUNT_METERS,
    COUNT_METERS,
    METER_AMOUNT_DIGITS,
    METER_AMOUNT_PLACES,
    METER_NAMES,
    TICKET_METERS,
    Casino,
    Game,
    Machine,
    MeterReading,
    MeterReconciliation,
    validate_time_zone,
)
from machines.models.history import (
    CasinoEvent,
    ConfigChange,
    MachineEvent,
    RecordedChange,
    recorded_change_meta,
    tracked,
)
from machines.models.places import Place

__all__ = [
    "AMOUNT_METERS",
    "COUNT_METERS",
    "GENESIS_MAC",
    "METER_AMOUNT_DIGITS",
    "METER_AMOUNT_PLACES",
    "METER_NAMES",
    "TICKET_METERS",
    "BooksVerification",
    "Casino",
    "CasinoEvent",
    "ChainHead",
    "Chained",
    "ConfigChange",
    "Game",
    "Machine",
    "MachineEvent",
    "MeterReading",
    "MeterReconciliation",
    "Place",
    "RecordedChange",
    "chain_link_unique",
    "recorded_change_meta",
    "tracked",
    "validate_time_zone",
]
