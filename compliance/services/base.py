"""What every compliance service shares: the desk kinds as its rules see them, and its refusals."""

from casino_office.errors import DomainError

GENESIS_HASH = "0" * 64
# The desk's kinds as compliance's rules see them (casino rules §1: chips and slot tokens alike).
PURCHASE_KINDS = frozenset({"chips_buy", "ticket_sale", "tokens_buy", "smartcard_load"})
PAYOUT_KINDS = frozenset(
    {"ticket_payout", "receipt_payout", "smartcard_payout", "chips_cashout", "tokens_cashout", "kiosk_payout"}
)
# What an unidentified player can split across the desks and kiosks (issue 21): the kinds above, and the notes a
# kiosk takes in for a ticket (a machine-side operation the desk's books record one by one).
STRUCTURING_KINDS = PURCHASE_KINDS | PAYOUT_KINDS | frozenset({"kiosk_ticket"})


class PersonError(ValueError):
    """Identity details that cannot be accepted; the message is shown as it is."""


class IdentificationRefused(DomainError):
    """The person may not make this transaction (age, self-exclusion, document)."""
