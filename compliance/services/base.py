"""What every compliance service shares: the desk kinds as its rules see them, and its refusals."""

from casino_office import vocabulary
from casino_office.errors import DomainError

GENESIS_HASH = "0" * 64
# The desk's kinds as compliance's rules see them, from the one table (casino_office.vocabulary).
IDENTITY_KINDS = frozenset(vocabulary.IDENTITY_KINDS)
PURCHASE_KINDS = frozenset(vocabulary.PURCHASE_KINDS)
PAYOUT_KINDS = frozenset(vocabulary.PAYOUT_KINDS)
STRUCTURING_KINDS = frozenset(vocabulary.STRUCTURING_KINDS)


class PersonError(ValueError):
    """Identity details that cannot be accepted; the message is shown as it is."""


class IdentificationRefused(DomainError):
    """The person may not make this transaction (age, self-exclusion, document)."""
