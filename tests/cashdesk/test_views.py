"""The web UI through the Django test client: the cashier's day, and who may open what."""

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.models import CashTransaction, HoldCase, MachineReceipt
from compliance.services import person_document_number
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user, personal_code, with_key
from tickets.models import Ticket


@pytest.fixture
def staff(casino, cashier, cashier2, supervisor, floor, compliance, manager):
    users = {
        "cashier": cashier,
        "cashier2": cashier2,
        "supervisor": supervisor,
        "floor": floor,
        "compliance": compliance,
        "manager": manager,
        "nobody": make_user("norole"),
    }
    for user in users.values():
        StaffAssignment.objects.create(user=user, casino=casino)
    return users


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _count_post(**overrides):
    data = {item: str(value) for item, value in FLOAT.items()}
    data.update({k: str(v) for k, v in overrides.items()})
    return data


def test_a_cashiers_day_through_the_ui(api, staff, desk, vault, floor):
    client = login(staff["cashier"])

    # Open the shift with the counted float.
    assert client.get("/desk/").status_code == 200
    response = client.post("/desk/", _count_post(desk=desk.pk))
    assert response.status_code == 302
    page = client.get("/desk/")
    assert b"Scan or type the ticket number" in page.content
    assert b"autofocus" in page.content

    # Pay a ticket a machine printed: scan, see, Enter.
    number = api.issued_ticket("150.505")
    grouped = f"{number[:2]}-{number[2:6]}-{number[6:10]}-{number[10:14]}-{number[14:]}"
    page = client.get("/desk/").content.decode()
    assert 'method="post" action="/desk/ticket/" id="scan"' in page  # the number goes in the body, not the URL
    seen = client.post("/desk/ticket/", {"number": grouped})
    assert "Pay €150.51" in seen.content.decode()  # English screens; Lithuanian ones: test_i18n.py
    paid = client.post("/desk/ticket/pay/", with_key({"number": number}))
    assert paid.status_code == 302
    tx = CashTransaction.objects.get(kind="ticket_payout")
    assert paid["Location"] == f"/desk/transactions/{tx.pk}/"
    assert tx.amount == Decimal("150.51")
    receipt = client.get(f"/documents/receipt/{tx.pk}.pdf")
    assert receipt["Content-Type"] == "application/pdf"
    assert receipt["X-Frame-Options"] == "SAMEORIGIN"  # framed on the transaction page, ready to print

    # The same ticket again: refused in plain words, and recorded.
    again = client.post("/desk/ticket/", {"number": number})
    assert b"Already paid on" in again.content
    assert Ticket.objects.get(validation_number=number).events.filter(kind="refused").count() == 1

    # Sell a ticket and print its voucher.
    sold = client.post("/desk/sell/", with_key({"amount": "25.00"}))
    sale = CashTransaction.objects.get(kind="ticket_sale")
    assert sold["Location"] == f"/desk/transactions/{sale.pk}/"
    assert client.get(f"/documents/voucher/{sale.ticket_id}.pdf").status_code == 200

    # Chips over 1000 EUR: refused without a person, done with a new one.
    refused = client.post("/desk/chips/", with_key({"direction": "buy", "chip_500": "3"}))
    assert b"identify the person" in refused.content
    assert not CashTransaction.objects.filter(kind="chips_buy").exists()
    person = {
        "personal_code": personal_code(dt.date(1985, 3, 4), male=False),
        "document_type": "id_card",
        "document_number": "LT 99887766",
        "document_expiry": "2030-06-30",
        "given_names": "Rūta",
        "surnames": "Žemaitė",
        "date_of_birth": "1985-03-04",
    }
    done = client.post("/desk/chips/", with_key({"direction": "buy", "chip_500": "3", **person}))
    assert done.status_code == 302
    chips_tx = CashTransaction.objects.get(kind="chips_buy")
    assert chips_tx.person.surnames == "Žemaitė"
    assert person_document_number(chips_tx.person) == "LT99887766"
    assert chips_tx.register_entry.amount == Decimal("1500.00")

    # Tokens, a smart card, a machine receipt recorded on the floor.
    assert client.post("/desk/tokens/", with_key({"direction": "buy", "count": "20"})).status_code == 302
    assert (
        client.post(
            "/desk/smartcard/", with_key({"card_number": "SC77", "credits": "12.345", "card_counter": "4"})
        ).status_code
        == 302
    )
    machine_receipt = services.machine_receipt_record(
        machine=api.machine, amount=Decimal("40.00"), reason="hopper", user=floor
    )
    assert (
        client.post(
            "/desk/receipt-payout/",
            with_key({"receipt_number": machine_receipt.number, "check_code": machine_receipt.check_code}),
        ).status_code
        == 302
    )
    assert MachineReceipt.objects.get(pk=machine_receipt.pk).paid_by is not None

    # Put a suspicious ticket on hold.
    suspicious = api.issued_ticket("77.00")
    client.post("/desk/ticket/hold/", with_key({"number": suspicious, "reason": "suspected_copy", "note": "blurred"}))
    assert Ticket.objects.get(validation_number=suspicious).state == "on_hold"
    assert HoldCase.objects.filter(ticket__validation_number=suspicious).exists()

    # Close with a count 10 EUR short: the variance is recorded and shown.
    shift = staff["cashier"].shifts.get()
    expected_cash = services.shift_balances(shift)["cash"]
    balances = services.shift_balances(shift)
    counted = {
        "cash": str(expected_cash - Decimal("10.00")),
        **{
            item: str(int(balances[item] / services.count_amounts({item: 1})[item])) for item in FLOAT if item != "cash"
        },
    }
    closed = client.post("/desk/close/", counted)
    assert closed.status_code == 302
    summary = client.get(closed["Location"])
    assert "-€10.00" in summary.content.decode()
    report = client.get(f"/documents/shift/{shift.pk}.pdf")
    assert report["Content-Type"] == "application/pdf"


def test_supervisor_approves_a_drop_and_decides_a_hold(api, staff, shift, vault):
    cashier = login(staff["cashier"])
    cashier.post("/desk/transfer/", with_key({"direction": "drop", "amount": "5000.00"}))
    number = api.issued_ticket("60.00")
    case = services.ticket_hold(shift=shift, user=staff["cashier"], validation_number=number, reason="damage")

    supervisor = login(staff["supervisor"])
    page = supervisor.get("/supervisor/")
    assert page.status_code == 200
    transfer = shift.transfers.get()
    supervisor.post(f"/supervisor/transfers/{transfer.pk}/approve/")
    assert services.vault_balance(vault)["cash"] == Decimal("5000.00")
    supervisor.post(f"/supervisor/holds/{case.pk}/decide/", {"decision": "pay", "note": "ok"})
    assert HoldCase.objects.get(pk=case.pk).decision == "pay"

    # The cashier can now pay it.
    cashier.post("/desk/ticket/pay/", with_key({"number": number}))
    assert Ticket.objects.get(validation_number=number).state == "redeemed"


def test_a_cashier_cannot_approve_their_own_transfer_even_by_url(staff, shift):
    client = login(staff["cashier"])
    client.post("/desk/transfer/", with_key({"direction": "drop", "amount": "100.00"}))
    transfer = shift.transfers.get()
    assert client.post(f"/supervisor/transfers/{transfer.pk}/approve/").status_code == 403
    assert shift.transfers.get().transaction is None


def test_manager_reports_and_csv(api, staff, shift):
    number = api.issued_ticket("10.00")
    services.ticket_payout(shift=shift, user=staff["cashier"], validation_number=number)
    client = login(staff["manager"])
    for report in ("daily", "liability", "exceptions", "machines", "desks"):
        page = client.get("/reports/", {"report": report})
        assert page.status_code == 200, report
        csv = client.get("/reports/", {"report": report, "format": "csv"})
        assert csv["Content-Type"].startswith("text/csv")
        assert csv.content.splitlines()[0]
    daily = client.get("/reports/", {"report": "desks", "format": "csv"}).content.decode()
    assert "Kasa 1,ticket_payout,1,10.00" in daily


ROLES = ["anonymous", "nobody", "cashier", "floor", "supervisor", "compliance", "manager"]
# Which roles may GET each page (everyone else: login redirect for anonymous, 403 otherwise).
PAGES = {
    "/desk/": {"cashier"},
    "/desk/sell/": {"cashier"},
    "/desk/chips/": {"cashier"},
    "/desk/tokens/": {"cashier"},
    "/desk/smartcard/": {"cashier"},
    "/desk/receipt-payout/": {"cashier"},
    "/desk/transfer/": {"cashier"},
    "/desk/close/": {"cashier"},
    "/desk/handover/": {"cashier"},
    "/floor/receipts/": {"floor"},
    "/supervisor/": {"supervisor", "compliance", "manager"},  # a manager: the held tickets, to decide late ones
    "/reports/": {"supervisor", "manager"},
}


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_is_checked_against_every_role(staff, shift, path):
    for role in ROLES:
        client = Client() if role == "anonymous" else login(staff[role])
        status = client.get(path).status_code
        if role in PAGES[path]:
            assert status in (200, 302), (path, role, status)
            if status == 302:
                assert path.startswith("/desk/")  # a cashier without a shift is sent to open one
        elif role == "anonymous":
            assert status == 302, (path, role)
        else:
            assert status == 403, (path, role, status)


def test_floor_attendant_cannot_pay(api, staff, shift):
    number = api.issued_ticket()
    response = login(staff["floor"]).post("/desk/ticket/pay/", with_key({"number": number}))
    assert response.status_code == 403
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_staff_of_another_casino_see_nothing_here(staff, shift, other_casino):
    outsider = make_user("outsider", "shift_supervisor")
    StaffAssignment.objects.create(user=outsider, casino=other_casino)
    tx = services.tokens_buy(shift=shift, user=staff["cashier"], count=2)
    client = login(outsider)
    assert client.get(f"/documents/receipt/{tx.pk}.pdf").status_code == 404
    assert client.get(f"/desk/transactions/{tx.pk}/").status_code == 404


def test_home_sends_each_role_to_its_page(staff):
    expected = {"cashier": "/desk/", "floor": "/floor/receipts/", "supervisor": "/dashboard/", "manager": "/dashboard/"}
    for role, target in expected.items():
        assert login(staff[role]).get("/")["Location"] == target
    assert login(staff["nobody"]).get("/").status_code == 403
    assert Client().get("/")["Location"].startswith("/accounts/login/")


ACTIONS = {
    "/desk/ticket/pay/": {"cashier"},
    "/desk/ticket/hold/": {"cashier"},
    "/supervisor/transfers/1/approve/": {"supervisor"},
    "/supervisor/reversals/1/approve/": {"supervisor"},
    "/supervisor/holds/1/decide/": {"supervisor", "compliance", "manager"},
    "/supervisor/tickets/1/resolve/": {"supervisor"},
    "/supervisor/tickets/void/": {"supervisor"},
}


@pytest.mark.parametrize("path", list(ACTIONS))
def test_every_action_is_refused_to_roles_without_it(staff, path):
    for role in ROLES:
        if role in ACTIONS[path]:
            continue
        client = Client() if role == "anonymous" else login(staff[role])
        status = client.post(path, {}).status_code
        assert status == (302 if role == "anonymous" else 403), (path, role, status)


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/documents/receipt/{tx}.pdf", {"cashier", "supervisor", "manager"}),
        # The X report of the open shift: not to its cashier under the blind count (tests/cashdesk/test_blind_count.py).
        ("/documents/shift/{shift}.pdf", {"supervisor", "manager"}),
        ("/documents/machine-receipt/{receipt}.pdf", {"floor"}),  # who recorded it (and later the cashier who paid)
    ],
)
def test_documents_are_shown_only_to_who_needs_them(api, staff, shift, floor, path, allowed):
    tx = services.tokens_buy(shift=shift, user=staff["cashier"], count=1)
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("1.00"), reason="r", user=floor)
    url = path.format(tx=tx.pk, shift=shift.pk, receipt=receipt.pk)
    for role in ROLES:
        client = Client() if role == "anonymous" else login(staff[role])
        status = client.get(url).status_code
        if role in allowed:
            assert status == 200, (url, role)
        else:
            assert status in (302, 403, 404), (url, role, status)


def test_a_refused_payout_goes_back_to_the_ticket_with_the_reason(api, staff, shift):
    number = api.issued_ticket("1500.00")
    page = login(staff["cashier"]).post("/desk/ticket/pay/", with_key({"number": number}))
    assert page.status_code == 200
    text = page.content.decode()
    assert "identify the person" in text
    assert number in text
    assert "€1,500.00" in text
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_a_ticket_number_in_the_url_is_not_looked_up(api, staff, shift):
    """Numbers in URLs end in access logs: an old bookmark or a typed /desk/ticket/?number= shows the desk."""
    number = api.issued_ticket()
    services.ticket_payout(shift=shift, user=staff["cashier"], validation_number=number)  # presented: refused
    response = login(staff["cashier"]).get("/desk/ticket/", {"number": number})
    assert response.status_code == 302
    assert response["Location"] == "/desk/"
    assert not Ticket.objects.get(validation_number=number).events.filter(kind="refused").exists()
    assert number not in login(staff["cashier"]).get("/desk/").content.decode()
