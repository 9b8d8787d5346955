"""Transfers between a desk and the vault carry any items: cash, each value-chip denomination, slot tokens.

Issue 21 ("Trust holes"): transfers were cash only, so the vault's chips changed
only through counts. A transfer now moves any items, with the same approval by
someone other than who asked, and neither side ever below zero.
"""

from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import printing, services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, Leg, Transfer
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.cashdesk.test_printing import pdf_text
from tests.factories import with_key


@pytest.fixture
def chip_vault(vault, supervisor):
    """The vault counted with cash, 100 € chips and tokens (its first count brings them into the books)."""
    services.vault_count(
        vault=vault, user=supervisor, counted={"cash": Decimal("50000.00"), "chip_100": 40, "token": 500}
    )
    return vault


def test_a_drop_carries_cash_chips_and_tokens_to_the_vault(shift, cashier, supervisor, vault):
    drop = services.transfer_request(
        shift=shift,
        user=cashier,
        direction="drop",
        amount=Decimal("500.00"),
        chips_and_tokens={"chip_100": 10, "chip_0_50": 4, "token": 50},
    )
    assert drop.amount == Decimal("1552.00")
    assert {line.item: (line.count, line.amount) for line in drop.lines.all()} == {
        "cash": (None, Decimal("500.00")),
        "chip_100": (10, Decimal("1000.00")),
        "chip_0_50": (4, Decimal("2.00")),
        "token": (50, Decimal("50.00")),
    }
    assert place_balances(shift.desk)["chip_100"] == Decimal("5000")  # nothing moves before the approval

    tx = services.transfer_approve(transfer=drop, supervisor=supervisor)

    assert tx.kind == "drop"
    assert tx.amount == Decimal("1552.00")
    assert tx.approved_by == supervisor
    desk, held = place_balances(shift.desk), place_balances(vault)
    assert desk["cash"] == FLOAT["cash"] - Decimal("500.00")
    assert held["cash"] == Decimal("500.00")
    assert desk["chip_100"] == Decimal("4000")
    assert held["chip_100"] == Decimal("1000")
    assert desk["chip_0_50"] == Decimal("98.00")
    assert held["chip_0_50"] == Decimal("2.00")
    assert desk["token"] == Decimal("1950")
    assert held["token"] == Decimal("50")
    assert Leg.objects.filter(transaction=tx, desk=vault, item="chip_100").get().count == 10


def test_a_fill_brings_the_vaults_chips_to_the_desk(shift, cashier, supervisor, chip_vault):
    fill = services.transfer_request(
        shift=shift, user=cashier, direction="fill", chips_and_tokens={"chip_100": 15, "token": 100}
    )
    services.transfer_approve(transfer=fill, supervisor=supervisor)
    assert place_balances(shift.desk)["chip_100"] == Decimal("6500")
    assert place_balances(chip_vault)["chip_100"] == Decimal("2500")
    assert place_balances(chip_vault)["token"] == Decimal("400")
    assert place_balances(chip_vault)["cash"] == Decimal("50000.00")


def test_a_fill_of_chips_the_vault_does_not_hold_is_refused_and_writes_nothing(shift, cashier, supervisor, chip_vault):
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", chips_and_tokens={"chip_500": 1})
    before = CashTransaction.objects.count()
    with pytest.raises(CashDeskError) as refused:
        services.transfer_approve(transfer=fill, supervisor=supervisor)
    assert refused.value.code == "insufficient_stock"
    assert "Vault" in refused.value.message
    assert "Chip 500 €" in refused.value.message
    assert CashTransaction.objects.count() == before
    assert Transfer.objects.get(pk=fill.pk).transaction is None


def test_a_drop_of_more_chips_than_the_desk_holds_is_refused(shift, cashier, supervisor, vault):
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", chips_and_tokens={"chip_500": 21})
    with pytest.raises(CashDeskError) as refused:
        services.transfer_approve(transfer=drop, supervisor=supervisor)
    assert refused.value.code == "insufficient_stock"
    assert place_balances(vault)["chip_500"] == 0


def test_the_requester_never_approves_a_chip_transfer(shift, cashier, supervisor, vault):
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", chips_and_tokens={"chip_5": 2})
    with pytest.raises(CashDeskError, match="Only a shift supervisor"):
        services.transfer_approve(transfer=drop, supervisor=cashier)


@pytest.mark.parametrize(
    ("amount", "chips_and_tokens", "code"),
    [
        (None, None, "nothing_to_move"),
        (Decimal("0"), {"chip_100": 0}, "nothing_to_move"),
        (None, {"colour_chip": 3}, "invalid_item"),
        (None, {"cash": 3}, "invalid_item"),
        (None, {"chip_100": -2}, "invalid_count"),
        (None, {"chip_100": 2.5}, "invalid_count"),
        (Decimal("-1.00"), {"chip_100": 2}, "invalid_amount"),
        (Decimal("1.005"), None, "invalid_amount"),
        # The casino's largest single transfer (100 000.00) is of the value moved, chips included.
        (Decimal("99000.00"), {"chip_500": 3}, "over_limit"),
    ],
)
def test_a_transfer_of_nothing_or_of_what_is_not_an_item_is_refused(shift, cashier, amount, chips_and_tokens, code):
    with pytest.raises(CashDeskError) as refused:
        services.transfer_request(
            shift=shift, user=cashier, direction="drop", amount=amount, chips_and_tokens=chips_and_tokens
        )
    assert refused.value.code == code
    assert not Transfer.objects.exists()


# --- the screens and the paper ------------------------------------------------------------------------------------


@pytest.fixture
def clients(casino, cashier, supervisor, shift):
    for user in (cashier, supervisor):
        StaffAssignment.objects.create(user=user, casino=casino)
    desk, approver = Client(), Client()
    desk.force_login(cashier)
    approver.force_login(supervisor)
    return desk, approver


def test_the_transfer_form_sends_chips_and_tokens_and_the_supervisor_sees_them(clients, shift, vault):
    desk, approver = clients
    form = desk.get("/desk/transfer/").content.decode()
    for name in ("amount", "chip_500", "chip_0_50", "token"):
        assert f'name="{name}"' in form, name

    sent = desk.post(
        "/desk/transfer/", with_key({"direction": "drop", "amount": "", "chip_25": "8", "token": "30", "chip_1": "0"})
    )

    assert sent.status_code == 302
    transfer = shift.transfers.get()
    assert {line.item: line.count for line in transfer.lines.all()} == {"chip_25": 8, "token": 30}
    page = approver.get("/supervisor/").content.decode()
    assert "Chip 25 € × 8" in page
    assert "Slot token 1 € × 30" in page
    assert approver.post(f"/supervisor/transfers/{transfer.pk}/approve/").status_code == 302
    assert place_balances(vault)["chip_25"] == Decimal("200")


def test_the_transfer_form_with_nothing_to_move_is_a_form_error(clients, shift):
    desk, _approver = clients
    page = desk.post("/desk/transfer/", with_key({"direction": "fill", "amount": "", "chip_100": "0"}))
    assert page.status_code == 200
    assert "Enter the cash or the pieces to move." in page.content.decode()
    assert not Transfer.objects.exists()


def test_the_receipt_of_a_transfer_lists_every_item_and_the_approver(shift, cashier, supervisor, vault):
    drop = services.transfer_request(
        shift=shift, user=cashier, direction="drop", amount=Decimal("250.00"), chips_and_tokens={"chip_100": 3}
    )
    tx = services.transfer_approve(transfer=drop, supervisor=supervisor)
    text = pdf_text(printing.receipt_pdf(tx))
    assert "Drop to the vault" in text
    assert "Chip 100 € × 3" in text
    assert "Saugykla / Vault: Vault" in text
    assert "Approved by: rasa" in text
    assert "550,00 EUR" in text


def test_the_transfers_report_lists_every_item_each_transfer_moved(casino, shift, cashier, supervisor, manager, vault):
    drop = services.transfer_request(
        shift=shift, user=cashier, direction="drop", amount=Decimal("300.00"), chips_and_tokens={"chip_500": 2}
    )
    tx = services.transfer_approve(transfer=drop, supervisor=supervisor)
    services.transfer_request(shift=shift, user=cashier, direction="drop", chips_and_tokens={"token": 9})  # waiting
    StaffAssignment.objects.create(user=manager, casino=casino)
    client = Client()
    client.force_login(manager)

    page = client.get("/reports/?report=transfers")
    csv = client.get("/reports/?report=transfers&format=csv").content.decode().splitlines()

    assert page.status_code == 200
    html = page.content.decode()
    assert tx.receipt_number in html
    assert "Chip 500 €" in html
    assert csv[0] == "when,receipt,desk,kind,item,pieces,amount,cashier,approver"
    rows = [line.split(",")[1:] for line in csv[1:]]
    assert rows == [
        [tx.receipt_number, "Kasa 1", "drop", "cash", "", "300.00", "ona", "rasa"],
        [tx.receipt_number, "Kasa 1", "drop", "chip_500", "2", "1000.00", "ona", "rasa"],
    ]
