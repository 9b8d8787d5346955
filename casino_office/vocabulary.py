"""The cash desk's transaction kinds, written once with what each one means.

Every list of kinds in the code (the books' constraints and triggers, the
register of persons, the compliance rules, the reversal rule) is derived here
from `KINDS` by `kind_lists`: adding a kind is one entry. It sits at the
bottom because compliance, below the cash desk, derives the register's kinds
from it. The lists keep the table's order, which is what the models'
constraints were frozen with.
"""

from dataclasses import dataclass
from typing import Literal

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

Identity = Literal["purchase", "payout"]
TicketRole = Literal["payout", "cash_in"]


@dataclass(frozen=True)
class Kind:
    """One kind of cash-desk transaction and its properties."""

    value: str
    label: str | Promise
    # Over the casino's identity threshold the person is identified (casino rules §1: "žetonai" are value chips
    # and slot tokens alike; strictly more than 1000 EUR): a purchase of value, or a payout of winnings.
    identity: Identity | None = None
    # Written into the register of persons: every identity kind but the kiosk's payout, which identifies nobody
    # (the database refuses, whatever the path, a kiosk payout above the threshold).
    register: bool = False
    # The other side of the desk's legs (a cashdesk.models.Counterparty value), when the kind has a fixed one.
    counterparty: str | None = None
    # Money that comes into the desk from a player: refused above the desk's cash limit.
    cash_in: bool = False
    # Approved by a second person: the approver is never the one who asked.
    approved: bool = False
    # Written by a kiosk by the API: it names the kiosk, and a person only when a supervisor settled it.
    kiosk: bool = False
    # What the kind does with a ticket in cash: pays it out, or takes cash in for it (one of each per ticket).
    ticket: TicketRole | None = None
    # A reversal can undo it. A ticket or receipt payout is final: the paper was taken in; a wrong one is an
    # incident for the supervisor, not an undo.
    reversible: bool = False
    # Moves value between a place and the vault (a fill or a drop).
    vault_transfer: bool = False
    # Watched for structuring though nobody is identified for it (identity kinds always are; issue 21): the notes
    # a kiosk takes in for a ticket.
    structuring: bool = False


# The order is the choices' order (and the constraints' lists keep it).
KINDS: tuple[Kind, ...] = (
    Kind(
        "ticket_payout",
        _("Ticket payout"),
        identity="payout",
        register=True,
        counterparty="tickets",
        ticket="payout",
    ),
    Kind(
        "ticket_sale",
        _("Ticket sale"),
        identity="purchase",
        register=True,
        counterparty="tickets",
        cash_in=True,
        ticket="cash_in",
        reversible=True,
    ),
    Kind(
        "chips_buy",
        _("Cash for chips"),
        identity="purchase",
        register=True,
        counterparty="players",
        cash_in=True,
        reversible=True,
    ),
    Kind(
        "chips_cashout", _("Chips for cash"), identity="payout", register=True, counterparty="players", reversible=True
    ),
    Kind(
        "tokens_buy",
        _("Cash for tokens"),
        identity="purchase",
        register=True,
        counterparty="players",
        cash_in=True,
        reversible=True,
    ),
    Kind(
        "tokens_cashout",
        _("Tokens for cash"),
        identity="payout",
        register=True,
        counterparty="players",
        reversible=True,
    ),
    Kind(
        "smartcard_payout",
        _("Smart card payout"),
        identity="payout",
        register=True,
        counterparty="smartcards",
        reversible=True,
    ),
    Kind(
        "smartcard_load",
        _("Cash onto a smart card"),
        identity="purchase",
        register=True,
        counterparty="smartcards",
        cash_in=True,
        reversible=True,
    ),
    Kind("receipt_payout", _("Machine receipt payout"), identity="payout", register=True, counterparty="receipts"),
    Kind("drop", _("Drop to the vault"), approved=True, vault_transfer=True),
    Kind("fill", _("Fill from the vault"), cash_in=True, approved=True, vault_transfer=True),
    # Undoing a cash-out brings the cash back in.
    Kind("reversal", _("Reversal"), cash_in=True, approved=True),
    Kind("count", _("Count difference")),
    # A place's first count: the stock it brings into the books, not a difference from them.
    Kind("opening_balance", _("Opening balance")),
    Kind(
        "kiosk_payout",
        _("Ticket paid at a kiosk"),
        identity="payout",
        counterparty="tickets",
        kiosk=True,
        ticket="payout",
    ),
    Kind(
        "kiosk_ticket",
        _("Ticket printed at a kiosk"),
        counterparty="tickets",
        kiosk=True,
        ticket="cash_in",
        structuring=True,
    ),
    # A table's closing count: what the tray holds beyond (or short of) the books is the table's win (or loss).
    Kind("table_result", _("Table result"), counterparty="table_win"),
    # Cash into a table's drop box, value chips out of its tray (casino rules: identified over the threshold
    # wherever the chips are bought).
    Kind(
        "table_buy_in",
        _("Chips bought at a gaming table"),
        identity="purchase",
        register=True,
        counterparty="players",
    ),
    # Colour chips at a roulette table: value chips into the tray against colour chips out, and back (the
    # difference then is the table's win or loss on them). No cash moves.
    Kind("table_colour", _("Colour chips at a table"), counterparty="colour_chips"),
    # Value chips for value chips of other denominations at a table (a buy-in with chips, not cash): the tray's
    # denominations change, its value does not; no cash, no drop, no register.
    Kind("table_exchange", _("Chips exchanged at a gaming table"), counterparty="players"),
    # Chips from the cage (a desk or the vault) to a table's tray, and back, on a slip two people signed.
    Kind("table_fill", _("Fill of a table's tray")),
    Kind("table_credit", _("Credit from a table's tray")),
    # Issue 25, the count room: the notes a slot machine took in, into its drop box when the drop team removes it
    # (by its meters, against the slot machines' results), and a drop box's count into the vault (the difference
    # from what the box held in the books to over/short).
    Kind("machine_drop", _("Notes in a slot machine's drop box"), counterparty="slot_win"),
    Kind("box_count", _("Drop box counted into the vault")),
)


@dataclass(frozen=True)
class KindLists:
    """Every list of kinds the code uses, derived from one table."""

    all: list[str]
    choices: list[tuple[str, str | Promise]]
    identity: list[str]
    purchase: list[str]
    payout: list[str]
    register: list[str]
    register_choices: list[tuple[str, str | Promise]]
    kiosk: list[str]
    approved: list[str]
    cash_in: list[str]
    counterparty_of_kind: dict[str, str]
    ticket_cash_payout: list[str]
    ticket_cash_in: list[str]
    with_ticket: list[str]
    reversible: list[str]
    vault_transfer: list[str]
    structuring: list[str]


def kind_lists(kinds: tuple[Kind, ...]) -> KindLists:
    """The lists of a table of kinds; the module's own come from `KINDS`, a test's from a table with one more."""
    values = [k.value for k in kinds]
    if len(set(values)) != len(values):
        raise ValueError(f"a kind is listed twice: {values}")
    return KindLists(
        all=values,
        choices=[(k.value, k.label) for k in kinds],
        identity=[k.value for k in kinds if k.identity],
        purchase=[k.value for k in kinds if k.identity == "purchase"],
        payout=[k.value for k in kinds if k.identity == "payout"],
        register=[k.value for k in kinds if k.register],
        register_choices=[(k.value, k.label) for k in kinds if k.register],
        kiosk=[k.value for k in kinds if k.kiosk],
        approved=[k.value for k in kinds if k.approved],
        cash_in=[k.value for k in kinds if k.cash_in],
        counterparty_of_kind={k.value: k.counterparty for k in kinds if k.counterparty},
        ticket_cash_payout=[k.value for k in kinds if k.ticket == "payout"],
        ticket_cash_in=[k.value for k in kinds if k.ticket == "cash_in"],
        with_ticket=[k.value for k in kinds if k.ticket],
        reversible=[k.value for k in kinds if k.reversible],
        vault_transfer=[k.value for k in kinds if k.vault_transfer],
        structuring=[k.value for k in kinds if k.identity or k.structuring],
    )


KIND_LISTS = kind_lists(KINDS)

# Payouts of winnings and purchases over the casino's threshold need the person identified.
IDENTITY_KINDS: list[str] = KIND_LISTS.identity
PURCHASE_KINDS: list[str] = KIND_LISTS.purchase
PAYOUT_KINDS: list[str] = KIND_LISTS.payout
# What the register of persons records (compliance.models.RegisterKind).
REGISTER_KINDS: list[str] = KIND_LISTS.register
KIOSK_KINDS: list[str] = KIND_LISTS.kiosk
APPROVED_KINDS: list[str] = KIND_LISTS.approved
CASH_IN_KINDS: list[str] = KIND_LISTS.cash_in
COUNTERPARTY_OF_KIND: dict[str, str] = KIND_LISTS.counterparty_of_kind
# A ticket paid in cash (at a desk or a kiosk), and cash taken in for a ticket (sold, or printed at a kiosk).
TICKET_CASH_PAYOUT_KINDS: list[str] = KIND_LISTS.ticket_cash_payout
TICKET_CASH_IN_KINDS: list[str] = KIND_LISTS.ticket_cash_in
TICKET_KINDS: list[str] = KIND_LISTS.with_ticket
REVERSIBLE_KINDS: list[str] = KIND_LISTS.reversible
VAULT_TRANSFER_KINDS: list[str] = KIND_LISTS.vault_transfer
# What an unidentified player can split across the desks and kiosks.
STRUCTURING_KINDS: list[str] = KIND_LISTS.structuring
