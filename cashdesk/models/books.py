"""The books: cash-desk transactions and their legs (double entry)."""

import pgtrigger
from django.conf import settings
from django.db import models
from django.db.models import BigIntegerField, F, Q
from django.db.models.functions import Cast
from django.utils.translation import gettext_lazy as _

from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models.desks import Shift
from casino_office.triggers import append_only, sql_list
from casino_office.vocabulary import KIND_LISTS, KindLists
from compliance.models import Person, RegisterEntry
from machines.models import Casino, Chained, Place, chain_link_unique


class TransactionKind(models.TextChoices):
    """The kinds of casino_office.vocabulary.KINDS, as choices (a test holds them equal to the table).

    Spelled out member by member so that `TransactionKind.TICKET_PAYOUT` stays typed.
    """

    TICKET_PAYOUT = "ticket_payout", _("Ticket payout")
    TICKET_SALE = "ticket_sale", _("Ticket sale")
    CHIPS_BUY = "chips_buy", _("Cash for chips")
    CHIPS_CASHOUT = "chips_cashout", _("Chips for cash")
    TOKENS_BUY = "tokens_buy", _("Cash for tokens")
    TOKENS_CASHOUT = "tokens_cashout", _("Tokens for cash")
    SMARTCARD_PAYOUT = "smartcard_payout", _("Smart card payout")
    SMARTCARD_LOAD = "smartcard_load", _("Cash onto a smart card")
    RECEIPT_PAYOUT = "receipt_payout", _("Machine receipt payout")
    DROP = "drop", _("Drop to the vault")
    FILL = "fill", _("Fill from the vault")
    REVERSAL = "reversal", _("Reversal")
    COUNT = "count", _("Count difference")
    # A place's first count: the stock it brings into the books, not a difference from them.
    OPENING_BALANCE = "opening_balance", _("Opening balance")
    KIOSK_PAYOUT = "kiosk_payout", _("Ticket paid at a kiosk")
    KIOSK_TICKET = "kiosk_ticket", _("Ticket printed at a kiosk")
    TABLE_RESULT = "table_result", _("Table result")
    TABLE_BUY_IN = "table_buy_in", _("Chips bought at a gaming table")
    TABLE_COLOUR = "table_colour", _("Colour chips at a table")
    TABLE_EXCHANGE = "table_exchange", _("Chips exchanged at a gaming table")
    TABLE_FILL = "table_fill", _("Fill of a table's tray")
    TABLE_CREDIT = "table_credit", _("Credit from a table's tray")
    MACHINE_DROP = "machine_drop", _("Notes in a slot machine's drop box")
    BOX_COUNT = "box_count", _("Drop box counted into the vault")


class Counterparty(models.TextChoices):
    """The other side of a physical place's legs: who or what the value came from or went to."""

    PLAYERS = "players", _("Players")
    TICKETS = "tickets", _("Tickets outstanding")
    RECEIPTS = "receipts", _("Machine receipts outstanding")
    SMARTCARDS = "smartcards", _("Smart-card credits outstanding")
    OVER_SHORT = "over_short", _("Over/short")
    OPENING = "opening", _("Opening balances")
    # The casino's win (or loss) at its gaming tables.
    TABLE_WIN = "table_win", _("Table results")
    # The value of the colour chips players hold at the tables.
    COLOUR_CHIPS = "colour_chips", _("Colour chips outstanding")
    # The casino's win (or loss) at its slot machines: the notes they take in, as their meters counted them.
    SLOT_WIN = "slot_win", _("Slot machine results")


def kind_constraints(kinds: KindLists) -> list[models.BaseConstraint]:
    """The books' rules that name lists of kinds, built from the lists of one table (a test passes a longer one)."""
    return [
        models.CheckConstraint(condition=Q(kind__in=kinds.all), name="cashtx_kind_valid"),
        models.CheckConstraint(
            condition=~Q(kind__in=kinds.identity) | Q(amount__lte=F("identity_threshold")) | Q(person__isnull=False),
            name="cashtx_identity_over_threshold",
        ),
        # Issue 26: a purchase for cash names its person (an admitted visitor, or identified at the desk) above the
        # casino's anonymous limit when it was made; a transaction from before the door has no limit (null).
        models.CheckConstraint(
            condition=~Q(kind__in=kinds.purchase)
            | Q(anonymous_limit__isnull=True)
            | Q(amount__lte=F("anonymous_limit"))
            | Q(person__isnull=False),
            name="cashtx_purchase_over_anonymous_limit",
        ),
        models.CheckConstraint(
            condition=~Q(kind__in=kinds.approved) | ~Q(approved_by=F("created_by")),
            name="cashtx_approver_is_not_creator",
        ),
        # A kiosk's kinds name the kiosk (and a person only when a supervisor settled a stuck payout);
        # every other kind is made by a person and names no kiosk.
        models.CheckConstraint(
            condition=Q(kind__in=kinds.kiosk, machine__isnull=False)
            | (~Q(kind__in=kinds.kiosk) & Q(machine__isnull=True, created_by__isnull=False)),
            name="cashtx_made_by_person_or_kiosk",
        ),
        # One cash payout of a ticket, at a desk or at a kiosk; one cash-in for it, sold or printed at a kiosk.
        models.UniqueConstraint(
            fields=["ticket"],
            condition=Q(kind__in=kinds.ticket_cash_payout),
            name="cashtx_one_cash_payout_per_ticket",
        ),
        models.UniqueConstraint(
            fields=["ticket"],
            condition=Q(kind__in=kinds.ticket_cash_in),
            name="cashtx_one_cash_in_per_ticket",
        ),
        models.CheckConstraint(
            condition=~Q(kind__in=kinds.with_ticket) | Q(ticket__isnull=False),
            name="cashtx_ticket_kinds_have_ticket",
        ),
    ]


def register_entry_required(identity_kinds: list[str]) -> pgtrigger.Trigger:
    """No cash transaction over the identification threshold commits without its register entry, whatever wrote
    it (casino rules §1; checked at commit)."""
    return pgtrigger.Trigger(
        name="requires_register_entry",
        when=pgtrigger.After,
        operation=pgtrigger.Insert,
        timing=pgtrigger.Deferred,
        func=f"""
        IF NEW.kind IN ({sql_list(identity_kinds)})
           AND NEW.amount > NEW.identity_threshold
           AND NOT EXISTS (SELECT 1 FROM public.compliance_registerentry r WHERE r.transaction_id = NEW.id) THEN
            RAISE EXCEPTION 'cash transaction % is over the identification threshold and has no register entry',
                NEW.id USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NULL;
        """,  # noqa: S608 - the kinds are the vocabulary's own values
    )


def cash_payout_is_cashable(payout_kinds: list[str]) -> pgtrigger.Trigger:
    """Promotional credits are played, never paid in cash: no cash payout of a promo ticket, at a desk or at a
    kiosk, whatever wrote it (the services refuse it first with `not_cashable`)."""
    return pgtrigger.Trigger(
        name="cash_payout_is_cashable",
        when=pgtrigger.Before,
        operation=pgtrigger.Insert,
        condition=pgtrigger.Q(new__kind__in=payout_kinds),
        func="""
        IF EXISTS (
            SELECT 1 FROM public.tickets_ticket t WHERE t.id = NEW.ticket_id AND t.ticket_type <> 'cashable'
        ) THEN
            RAISE EXCEPTION 'cash transaction % pays a promotional ticket in cash', NEW.id
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
        """,
    )


class CashTransaction(Chained):
    """One cash-desk transaction: its legs, audit and receipt number are written together.

    A chained journal (machines.chains): the MAC of each transaction covers its
    fields and its legs, so no amount, leg or person behind it changes unseen.
    """

    journal = "cash_transactions"
    journal_casino = "casino_id"
    journal_fields = (
        "casino_id",
        "desk_id",
        "shift_id",
        "number",
        "kind",
        "amount",
        "person_id",
        "identity_threshold",
        "ticket_id",
        "reverses_id",
        "note",
        "created_by_id",
        "machine_id",
        "approved_by_id",
        "created_at",
        "machine_receipt_id",
        "operation_key",
    )
    journal_children = {"legs": ("casino_id", "desk_id", "counterparty", "shift_id", "item", "count", "amount")}
    # Added with the door (issue 26), after transactions were chained: covering them would change what every earlier
    # record's MAC meant. The person they name is covered (`person_id`); the visit and the limit of the moment are
    # kept by the append-only trigger and the check constraints.
    journal_exempt = ("id", "anonymous_limit", "visit_id")

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="cash_transactions", verbose_name=_("casino")
    )
    desk = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="transactions", verbose_name=_("desk"))
    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, null=True, blank=True, related_name="transactions", verbose_name=_("shift")
    )
    number = models.PositiveIntegerField(help_text=_("Receipt number, per desk."), verbose_name=_("number"))
    kind = models.CharField(max_length=20, choices=TransactionKind.choices, verbose_name=_("kind"))
    amount = models.DecimalField(
        max_digits=12, decimal_places=2, help_text=_("The transaction's value in EUR."), verbose_name=_("amount")
    )
    person = models.ForeignKey(
        Person, on_delete=models.PROTECT, null=True, blank=True, related_name="transactions", verbose_name=_("person")
    )
    # The casino's identity threshold when the transaction was made, so the
    # database itself can refuse an unidentified transaction above it.
    identity_threshold = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("identity threshold"))
    # The casino's anonymous purchase limit when the transaction was made (issue 26); null before the door.
    anonymous_limit = models.DecimalField(
        max_digits=12, decimal_places=2, null=True, blank=True, verbose_name=_("anonymous purchase limit")
    )
    # The admitted visitor the transaction was linked to at the desk or the table (a scanned visit card, or one of
    # the day's visitors picked): how the person's purchases over the gaming day are added up.
    visit = models.ForeignKey(
        "compliance.Visit",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transactions",
        verbose_name=_("visit"),
    )
    ticket = models.ForeignKey(
        "tickets.Ticket",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="cash_transactions",
        verbose_name=_("ticket"),
    )
    reverses = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by", verbose_name=_("reverses")
    )
    note = models.CharField(max_length=255, blank=True, verbose_name=_("note"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    # Who did it when no person did: the kiosk that paid or printed a ticket.
    machine = models.ForeignKey(
        "machines.Machine",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="cash_transactions",
        verbose_name=_("kiosk"),
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("approved by"),
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    machine_receipt = models.ForeignKey(
        "cashdesk.MachineReceipt",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="payouts",
        verbose_name=_("machine receipt"),
    )
    # The one-time key of the form that asked for this transaction: a repeated
    # or concurrent submission finds it and writes nothing (unique).
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        triggers = [
            *append_only(),
            register_entry_required(KIND_LISTS.identity),
            cash_payout_is_cashable(KIND_LISTS.ticket_cash_payout),
        ]
        verbose_name = _("cash transaction")
        verbose_name_plural = _("cash transactions")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["casino", "created_at"], name="cashtx_casino_time_idx")]
        constraints = [
            models.UniqueConstraint(fields=["desk", "number"], name="cashtx_number_unique_per_desk"),
            chain_link_unique("cashtx"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="cashtx_amount_positive"),
            # The visitor a transaction is linked to is its person (issue 26; set together by the desk's service).
            models.CheckConstraint(
                condition=Q(visit__isnull=True) | Q(person__isnull=False), name="cashtx_visit_has_person"
            ),
            models.CheckConstraint(
                condition=Q(kind=TransactionKind.REVERSAL, reverses__isnull=False, approved_by__isnull=False)
                | (~Q(kind=TransactionKind.REVERSAL) & Q(reverses__isnull=True)),
                name="cashtx_reversal_links_original",
            ),
            # One instrument, one payout: a second payout of a ticket or a
            # machine receipt, or a second sale of a ticket, cannot be written.
            models.UniqueConstraint(
                fields=["ticket"], condition=Q(kind=TransactionKind.TICKET_PAYOUT), name="cashtx_one_payout_per_ticket"
            ),
            models.UniqueConstraint(
                fields=["ticket"], condition=Q(kind=TransactionKind.TICKET_SALE), name="cashtx_one_sale_per_ticket"
            ),
            models.UniqueConstraint(
                fields=["machine_receipt"],
                condition=Q(kind=TransactionKind.RECEIPT_PAYOUT),
                name="cashtx_one_payout_per_receipt",
            ),
            models.CheckConstraint(
                condition=Q(kind=TransactionKind.RECEIPT_PAYOUT, machine_receipt__isnull=False)
                | (~Q(kind=TransactionKind.RECEIPT_PAYOUT) & Q(machine_receipt__isnull=True)),
                name="cashtx_receipt_payout_has_receipt",
            ),
            *kind_constraints(KIND_LISTS),
        ]

    def __str__(self) -> str:
        return f"{self.desk.code}-{self.number:06d} {self.get_kind_display()} {self.amount} EUR"

    @property
    def register_entry(self) -> RegisterEntry | None:
        """The register's line for this transaction, if it needed one (the register keeps this id as a value)."""
        return RegisterEntry.objects.filter(transaction_id=self.pk).first()

    @property
    def receipt_number(self) -> str:
        return f"{self.casino.code}-{self.desk.code}-{self.number:06d}"


def _value_matches_count() -> Q:
    """amount = count x denomination for counted items; cash has no count."""
    condition = Q(item=Item.CASH, count__isnull=True)
    # In bigint: PostgreSQL may evaluate every branch for every row, and a token count over 2**31 / 500 times
    # the 500 chip's value overflowed an integer (a database error instead of the booking).
    for item, value in DENOMINATIONS.items():
        condition |= Q(item=item, count__isnull=False, amount=Cast("count", BigIntegerField()) * value)
    return condition


class Leg(models.Model):
    """One side of a transaction: an item entering (+) or leaving (-) a place.

    A place is a physical one (a desk or the vault: `desk`) or a counterparty
    of the casino's books (players, tickets outstanding, over/short, ...).
    For every item the legs of a transaction sum to zero (a deferred
    constraint trigger checks it at commit); the table is append-only, and
    every balance is a sum of legs.
    """

    transaction = models.ForeignKey(
        CashTransaction, on_delete=models.PROTECT, related_name="legs", verbose_name=_("transaction")
    )
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    desk = models.ForeignKey(
        Place, on_delete=models.PROTECT, null=True, blank=True, related_name="legs", verbose_name=_("desk")
    )
    counterparty = models.CharField(
        max_length=12, choices=Counterparty.choices, blank=True, verbose_name=_("counterparty")
    )
    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, null=True, blank=True, related_name="legs", verbose_name=_("shift")
    )
    item = models.CharField(max_length=10, choices=Item.choices, verbose_name=_("item"))
    count = models.IntegerField(
        null=True, blank=True, help_text=_("Pieces, for chips and tokens."), verbose_name=_("count")
    )
    amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        help_text=_("Value in EUR; + into, - out of the place."),
        verbose_name=_("amount"),
    )

    class Meta:
        # For every item, the legs of a transaction sum to zero: checked at commit, so the legs of one
        # transaction may be inserted one by one.
        triggers = [
            *append_only(),
            pgtrigger.Trigger(
                name="balanced",
                when=pgtrigger.After,
                operation=pgtrigger.Insert,
                timing=pgtrigger.Deferred,
                declare=[("unbalanced", "record")],
                func="""
                SELECT item, SUM(amount) AS total, SUM(COALESCE(count, 0)) AS pieces INTO unbalanced
                FROM public.cashdesk_leg WHERE transaction_id = NEW.transaction_id
                GROUP BY item HAVING SUM(amount) <> 0 OR SUM(COALESCE(count, 0)) <> 0 LIMIT 1;
                IF FOUND THEN
                    RAISE EXCEPTION 'transaction % is unbalanced in %: its legs sum to %', NEW.transaction_id,
                        unbalanced.item, unbalanced.total USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NULL;
                """,
            ),
        ]
        verbose_name = _("leg")
        verbose_name_plural = _("legs")
        indexes = [
            models.Index(fields=["desk", "item"], name="leg_desk_item_idx"),
            models.Index(fields=["shift", "item"], name="leg_shift_item_idx"),
            models.Index(fields=["casino", "counterparty"], name="leg_casino_counterparty_idx"),
        ]
        constraints = [
            models.CheckConstraint(condition=Q(item__in=ALL_ITEMS), name="leg_item_valid"),
            models.CheckConstraint(condition=~Q(amount=0), name="leg_amount_not_zero"),
            models.CheckConstraint(condition=_value_matches_count(), name="leg_value_matches_count"),
            models.CheckConstraint(
                condition=(Q(desk__isnull=False) & Q(counterparty=""))
                | (Q(desk__isnull=True) & Q(counterparty__in=Counterparty.values) & Q(shift__isnull=True)),
                name="leg_one_place",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.desk_id or self.counterparty} {self.item} {self.amount:+} EUR"
