"""The transaction kinds are written once (casino_office.vocabulary): every list, the register's kinds and the
books' constraints and triggers follow from the table, and adding a kind is one entry."""

import ast
from pathlib import Path
from typing import Any

import pytest
from django.db.models import Q

from cashdesk.models import Counterparty, TransactionKind
from cashdesk.models.books import CashTransaction, cash_payout_is_cashable, kind_constraints, register_entry_required
from cashdesk.services import REVERSIBLE_KINDS as SERVICES_REVERSIBLE_KINDS
from casino_office import vocabulary
from casino_office.vocabulary import KINDS, Kind, kind_lists
from compliance.models import RegisterEntry, RegisterKind
from compliance.services import PAYOUT_KINDS as COMPLIANCE_PAYOUT_KINDS
from compliance.services import PURCHASE_KINDS as COMPLIANCE_PURCHASE_KINDS
from compliance.services.base import STRUCTURING_KINDS as COMPLIANCE_STRUCTURING_KINDS

PURCHASES = {"chips_buy", "ticket_sale", "tokens_buy", "smartcard_load", "table_buy_in"}
PAYOUTS = {"ticket_payout", "receipt_payout", "smartcard_payout", "chips_cashout", "tokens_cashout", "kiosk_payout"}

# Today's lists, frozen as they were written by hand before the table: the table changes no behaviour. Issue 24 added
# the table's result (a counterparty of its own) and the buy-in at a table (a purchase: identified and registered).
TODAY = {
    "identity": PURCHASES | PAYOUTS,
    "purchase": PURCHASES,
    "payout": PAYOUTS,
    "register": (PURCHASES | PAYOUTS) - {"kiosk_payout"},
    "kiosk": {"kiosk_payout", "kiosk_ticket"},
    "approved": {"reversal", "drop", "fill"},
    "cash_in": {"ticket_sale", "chips_buy", "tokens_buy", "smartcard_load", "fill", "reversal"},
    "ticket_cash_payout": {"ticket_payout", "kiosk_payout"},
    "ticket_cash_in": {"ticket_sale", "kiosk_ticket"},
    "with_ticket": {"ticket_payout", "ticket_sale", "kiosk_payout", "kiosk_ticket"},
    "reversible": {
        "chips_buy",
        "chips_cashout",
        "tokens_buy",
        "tokens_cashout",
        "smartcard_payout",
        "smartcard_load",
        "ticket_sale",
    },
    "vault_transfer": {"drop", "fill"},
    "structuring": PURCHASES | PAYOUTS | {"kiosk_ticket"},
}
TODAY_COUNTERPARTIES = {
    "ticket_payout": "tickets",
    "ticket_sale": "tickets",
    "chips_buy": "players",
    "chips_cashout": "players",
    "tokens_buy": "players",
    "tokens_cashout": "players",
    "smartcard_payout": "smartcards",
    "smartcard_load": "smartcards",
    "receipt_payout": "receipts",
    "kiosk_payout": "tickets",
    "kiosk_ticket": "tickets",
    "table_result": "table_win",
    "table_buy_in": "players",
    "table_colour": "colour_chips",
    "table_exchange": "players",
    "machine_drop": "slot_win",
}
TODAY_KINDS = [
    "ticket_payout",
    "ticket_sale",
    "chips_buy",
    "chips_cashout",
    "tokens_buy",
    "tokens_cashout",
    "smartcard_payout",
    "smartcard_load",
    "receipt_payout",
    "drop",
    "fill",
    "reversal",
    "count",
    "opening_balance",
    "kiosk_payout",
    "kiosk_ticket",
    "table_result",
    "table_buy_in",
    "table_colour",
    "table_exchange",
    "table_fill",
    "table_credit",
    "machine_drop",
    "box_count",
]

# Kinds invented for the test, with every property set (one paying out, one taking in), so each must show up
# everywhere its properties put it.
NEW_PAYOUT = Kind(
    "test_new_payout",
    "A payout added for the test",
    identity="payout",
    register=True,
    counterparty="players",
    cash_in=True,
    approved=True,
    kiosk=True,
    ticket="payout",
    reversible=True,
    vault_transfer=True,
)
NEW_PURCHASE = Kind(
    "test_new_purchase",
    "A purchase added for the test",
    identity="purchase",
    register=True,
    counterparty="tickets",
    cash_in=True,
    approved=True,
    kiosk=True,
    ticket="cash_in",
    reversible=True,
    vault_transfer=True,
)


def _kinds_in(condition: Any) -> set[str]:
    """Every kind a Q condition names (`kind=` or `kind__in=`), however deep."""
    found: set[str] = set()
    for child in condition.children if isinstance(condition, Q) else []:
        if isinstance(child, Q):
            found |= _kinds_in(child)
        elif child[0] == "kind":
            found.add(str(child[1]))
        elif child[0] == "kind__in":
            found |= {str(value) for value in child[1]}
    return found


def test_the_derived_lists_are_todays() -> None:
    lists = vocabulary.KIND_LISTS
    for name, today in TODAY.items():
        assert set(getattr(lists, name)) == today, name
    assert lists.counterparty_of_kind == TODAY_COUNTERPARTIES
    assert lists.all == TODAY_KINDS
    assert set(vocabulary.IDENTITY_KINDS) == TODAY["identity"]
    assert set(vocabulary.KIOSK_KINDS) == TODAY["kiosk"]
    assert set(vocabulary.APPROVED_KINDS) == TODAY["approved"]
    assert set(vocabulary.CASH_IN_KINDS) == TODAY["cash_in"]
    assert vocabulary.COUNTERPARTY_OF_KIND == TODAY_COUNTERPARTIES


def test_the_other_layers_read_the_table() -> None:
    assert set(COMPLIANCE_PURCHASE_KINDS) == PURCHASES
    assert set(COMPLIANCE_PAYOUT_KINDS) == PAYOUTS
    assert set(COMPLIANCE_STRUCTURING_KINDS) == TODAY["structuring"]
    assert set(SERVICES_REVERSIBLE_KINDS) == TODAY["reversible"]


def test_the_transaction_kinds_are_the_table_exactly() -> None:
    """TransactionKind is spelled out member by member (so its members stay typed): it must match the table."""
    assert [(value, str(label)) for value, label in TransactionKind.choices] == [
        (kind.value, str(kind.label)) for kind in KINDS
    ]
    assert {member.name for member in TransactionKind} == {kind.value.upper() for kind in KINDS}


def test_the_register_kinds_are_the_identity_kinds_but_the_kiosk_payout() -> None:
    assert RegisterKind.values == [k.value for k in KINDS if k.identity and k.value != "kiosk_payout"]
    # One label per kind: the register shows the transaction's label.
    for value, label in RegisterKind.choices:
        assert str(label) == str(TransactionKind(value).label)


def test_every_counterparty_is_one_of_the_books() -> None:
    assert {k.counterparty for k in KINDS if k.counterparty} <= set(Counterparty.values)


def test_the_model_constraints_are_built_from_the_table() -> None:
    declared = {c.name: c for c in CashTransaction._meta.constraints}
    for built in kind_constraints(vocabulary.KIND_LISTS):
        assert declared[built.name] == built
    assert _kinds_in(declared["cashtx_kind_valid"].condition) == set(TODAY_KINDS)  # type: ignore[attr-defined]
    register = {c.name: c for c in RegisterEntry._meta.constraints}["register_kind_valid"]
    assert _kinds_in(register.condition) == TODAY["register"]  # type: ignore[attr-defined]


def _trigger_sql(trigger: Any) -> str:
    """The SQL the trigger installs on the books' table, as makemigrations freezes it."""
    return str(trigger.compile(CashTransaction).sql)


def test_the_triggers_sql_is_built_from_the_table() -> None:
    declared = {trigger.name: _trigger_sql(trigger) for trigger in CashTransaction._meta.triggers}  # type: ignore[attr-defined]
    assert declared["requires_register_entry"] == _trigger_sql(register_entry_required(vocabulary.IDENTITY_KINDS))
    cashable = _trigger_sql(cash_payout_is_cashable(vocabulary.TICKET_CASH_PAYOUT_KINDS))
    assert declared["cash_payout_is_cashable"] == cashable
    assert "WHEN (NEW.\"kind\" IN ('ticket_payout', 'kiosk_payout'))" in cashable
    for kind in TODAY["identity"]:
        assert f"'{kind}'" in declared["requires_register_entry"]


def test_kinds_added_to_the_table_are_everywhere_their_properties_say() -> None:
    lists = kind_lists((*KINDS, NEW_PAYOUT, NEW_PURCHASE))
    payout, purchase = NEW_PAYOUT.value, NEW_PURCHASE.value
    today = vocabulary.KIND_LISTS
    assert lists.all == [*TODAY_KINDS, payout, purchase]
    assert lists.payout == [*today.payout, payout]
    assert lists.purchase == [*today.purchase, purchase]
    assert lists.ticket_cash_payout == [*today.ticket_cash_payout, payout]
    assert lists.ticket_cash_in == [*today.ticket_cash_in, purchase]
    for name in set(TODAY) - {"payout", "purchase", "ticket_cash_payout", "ticket_cash_in"}:
        assert getattr(lists, name) == [*getattr(today, name), payout, purchase], name
    assert lists.choices[-2:] == [(payout, NEW_PAYOUT.label), (purchase, NEW_PURCHASE.label)]
    assert lists.register_choices[-2:] == [(payout, NEW_PAYOUT.label), (purchase, NEW_PURCHASE.label)]
    assert lists.counterparty_of_kind == {**TODAY_COUNTERPARTIES, payout: "players", purchase: "tickets"}
    # The books' constraints name them wherever they name a list of kinds they belong to.
    built = {c.name: _kinds_in(c.condition) for c in kind_constraints(lists)}  # type: ignore[attr-defined]
    for name, kinds in built.items():
        if name == "cashtx_one_cash_payout_per_ticket":
            assert payout in kinds
            assert purchase not in kinds
        elif name in ("cashtx_one_cash_in_per_ticket", "cashtx_purchase_over_anonymous_limit"):
            assert purchase in kinds
            assert payout not in kinds
        else:
            assert {payout, purchase} <= kinds, name
    # And so do the triggers' conditions.
    register_sql = _trigger_sql(register_entry_required(lists.identity))
    assert f"'{payout}'" in register_sql
    assert f"'{purchase}'" in register_sql
    cashable_sql = _trigger_sql(cash_payout_is_cashable(lists.ticket_cash_payout))
    assert f"'{payout}'" in cashable_sql
    assert f"'{purchase}'" not in cashable_sql


def test_a_kind_with_no_properties_is_in_no_list() -> None:
    lists = kind_lists((*KINDS, Kind("test_plain_kind", "Plain")))
    assert lists.all[-1] == "test_plain_kind"
    for name in TODAY:
        assert "test_plain_kind" not in getattr(lists, name), name
    assert "test_plain_kind" not in lists.counterparty_of_kind


def test_a_kind_listed_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="count"):
        kind_lists((*KINDS, Kind("count", "Again")))


def _kind_literals(path: Path) -> list[tuple[int, str]]:
    """String constants in a module that spell a kind, outside `__all__` (where services share the kinds' names)
    and outside TransactionKind's own members."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        exported = isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        )
        if exported or (isinstance(node, ast.ClassDef) and node.name == "TransactionKind"):
            skipped |= {id(child) for child in ast.walk(node)}
    kinds = set(TODAY_KINDS)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in kinds and id(node) not in skipped
    ]


def test_no_kind_is_spelled_outside_the_table() -> None:
    """Outside the table, the choices' members, migrations and tests, the code names kinds through the table.

    "count", "drop", "fill" and "reversal" are also everyday words (a count's field, a transfer's direction),
    so the source is searched for the kinds whose value no other word shares.
    """
    root = Path(__file__).resolve().parent.parent
    distinct = {kind for kind in TODAY_KINDS if "_" in kind}
    found = []
    for app in ("casino_office", "machines", "staff", "tickets", "compliance", "cashdesk", "ops"):
        for path in (root / app).rglob("*"):
            if "migrations" in path.parts or path.name == "vocabulary.py":
                continue
            if path.suffix == ".py":
                found += [(path, line, value) for line, value in _kind_literals(path) if value in distinct]
            elif path.suffix in (".html", ".js", ".txt"):
                text = path.read_text(encoding="utf-8")
                found += [(path, 0, kind) for kind in distinct if f'"{kind}"' in text or f"'{kind}'" in text]
    assert not found, found
