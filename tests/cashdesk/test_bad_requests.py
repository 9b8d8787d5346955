"""What a careless or hostile request to the staff UI gets: a 4xx or a form error in plain words, never a 500.

The clients here return a server error as the 500 response a browser would
get (raise_request_exception=False) instead of raising it in the test.
"""

from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test import Client

from cashdesk import services
from cashdesk.models import CashTransaction, ReversalRequest, Shift, SmartCardRead, Transfer
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user, with_key
from tests.races import race

REPORT_KINDS = ["daily", "liability", "exceptions", "machines", "desks", "books", "overshort"]


def _browser(user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def reader(casino: Any, db: None) -> Client:
    manager = make_user("report-reader", "manager")
    StaffAssignment.objects.create(user=manager, casino=casino)
    return _browser(manager)


@pytest.fixture
def desk_client(shift: Shift, cashier: Any, casino: Any) -> Client:
    StaffAssignment.objects.create(user=cashier, casino=casino)
    return _browser(cashier)


# --- Report periods ----------------------------------------------------------------------------------------------

BAD_PERIODS = [
    {"start": "0001-01-01", "end": "9999-12-31"},  # the end's next gaming day is past the calendar
    {"end": "9999-12-31"},
    {"start": "0001-01-01"},
    {"start": "1999-12-31"},
    {"end": "3000-01-01"},
    {"at": "0001-01-01T00:00"},
    {"at": "9999-12-31T23:59"},
    {"start": "2026-02-30"},
    {"end": "yesterday"},
    {"at": "noon"},
]


@pytest.mark.parametrize("period", BAD_PERIODS, ids=lambda period: "&".join(f"{k}={v}" for k, v in period.items()))
@pytest.mark.parametrize("as_csv", [False, True], ids=["page", "csv"])
def test_a_report_period_off_the_calendar_is_a_400_saying_which_dates(reader, period, as_csv):
    for kind in REPORT_KINDS:
        query = {"report": kind, **period, **({"format": "csv"} if as_csv else {})}
        page = reader.get("/reports/", query)
        assert page.status_code == 400, (kind, page.status_code)
        assert page["Content-Type"].startswith("text/html")
        text = page.content.decode()
        assert "Choose dates from" in text or "Enter dates as YYYY-MM-DD" in text or "Enter the moment as" in text


def test_the_widest_period_a_report_accepts_is_still_read(reader):
    for kind in REPORT_KINDS:
        page = reader.get("/reports/", {"report": kind, "start": "2000-01-01", "end": "2999-12-31"})
        assert page.status_code == 200, kind
        moment = reader.get("/reports/", {"report": kind, "at": "2999-12-31T23:59"})
        assert moment.status_code == 200, kind


# --- Numbers far too large in every desk form ---------------------------------------------------------------------

HUGE = ["1" + "0" * 26, "9" * 5000, "1e26", "100000000000000000000000000.000"]
DESK_FORMS = [
    ("/desk/sell/", "amount", {}),
    ("/desk/chips/", "chip_500", {"direction": "buy"}),
    ("/desk/chips/", "chip_1", {"direction": "cashout"}),
    ("/desk/tokens/", "count", {"direction": "buy"}),
    ("/desk/tokens/", "count", {"direction": "cashout"}),
    ("/desk/smartcard/", "credits", {"card_number": "SC1", "card_counter": "1"}),
    ("/desk/smartcard/", "card_counter", {"card_number": "SC1", "credits": "10.00"}),
    ("/desk/smartcard/load/", "amount", {"card_number": "SC1", "card_counter": "1"}),
    ("/desk/smartcard/load/", "card_counter", {"card_number": "SC1", "amount": "10.00"}),
    ("/desk/receipt-payout/", "receipt_number", {"check_code": "1234"}),
    ("/desk/ticket/pay/", "printed_amount", {"number": "000000000000000000"}),
    ("/desk/transfer/", "amount", {"direction": "drop"}),
]


def _written() -> tuple[int, int, int, int]:
    return (
        CashTransaction.objects.exclude(kind__in=["count", "opening_balance"]).count(),
        Transfer.objects.count(),
        SmartCardRead.objects.count(),
        ReversalRequest.objects.count(),
    )


@pytest.mark.parametrize(("path", "field", "extra"), DESK_FORMS, ids=[f"{p}{f}" for p, f, _ in DESK_FORMS])
def test_a_number_far_too_large_is_a_form_error_and_writes_nothing(desk_client, path, field, extra):
    before = _written()
    for typed in HUGE:
        page = desk_client.post(path, with_key({**extra, field: typed}))
        assert page.status_code in (200, 302), (typed[:30], page.status_code)
        if page.status_code == 302:  # the ticket's page sends a refusal back to the desk, with its reason
            assert page["Location"] == "/desk/"
    assert _written() == before


@pytest.mark.parametrize("item", ["cash", "chip_500", "token"])
@pytest.mark.parametrize("path", ["/desk/close/", "/desk/handover/"])
def test_a_count_far_too_large_is_a_form_error_and_the_shift_stays_open(desk_client, shift, cashier2, path, item):
    for typed in HUGE:
        counted = {key: str(value) for key, value in FLOAT.items()}
        counted.update({item: typed, "next_cashier": str(cashier2.pk)})
        page = desk_client.post(path, counted)
        assert page.status_code == 200, (typed[:30], page.status_code)
    shift.refresh_from_db()
    assert shift.closed_at is None


def test_a_shift_opened_with_a_count_far_too_large_is_a_form_error(casino, desk):
    cashier = make_user("opener", "cashier")
    StaffAssignment.objects.create(user=cashier, casino=casino)
    client = _browser(cashier)
    for typed in HUGE:
        counted = {key: str(value) for key, value in FLOAT.items()}
        counted.update({"cash": typed, "desk": str(desk.pk)})
        assert client.post("/desk/", counted).status_code == 200
    assert not Shift.objects.filter(cashier=cashier).exists()


# --- The reversal request sent twice ----------------------------------------------------------------------------


def test_a_reversal_request_sent_twice_shows_the_first_result_and_asks_once(desk_client, shift, cashier):
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_25": 4})
    form = with_key({"reason": "wrong chips"})

    first = desk_client.post(f"/desk/reverse/{tx.pk}/", form, follow=True)
    again = desk_client.post(f"/desk/reverse/{tx.pk}/", form, follow=True)

    assert first.status_code == again.status_code == 200
    assert first.redirect_chain == again.redirect_chain == [("/desk/", 302)]
    assert "Reversal requested" in again.content.decode()
    assert ReversalRequest.objects.get().original == tx


def test_another_reversal_request_for_the_same_transaction_is_a_form_error(desk_client, shift, cashier):
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_25": 4})
    assert desk_client.post(f"/desk/reverse/{tx.pk}/", with_key({"reason": "wrong chips"})).status_code == 302

    other_tab = desk_client.post(f"/desk/reverse/{tx.pk}/", with_key({"reason": "wrong again"}))

    assert other_tab.status_code == 200
    assert "already asked for" in other_tab.content.decode()
    assert ReversalRequest.objects.get().reason == "wrong chips"


@pytest.mark.django_db(transaction=True)
def test_a_reversal_request_sent_twice_at_once_shows_the_first_result_to_both(casino):
    assert connection.vendor == "postgresql"
    cashier = make_user("double-reverse", "cashier")
    StaffAssignment.objects.create(user=cashier, casino=casino)
    desk = Place.objects.create(casino=casino, code="DR", name="Desk R")
    shift = services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_25": 4})
    key = "b" * 32

    def submit() -> int:
        response = _browser(cashier).post(f"/desk/reverse/{tx.pk}/", {"reason": "wrong chips", "operation_key": key})
        return response.status_code

    # The gate is the first submission between its insert and its commit; both others wait on its unique keys.
    results = race(
        [submit, submit],
        gate=(
            "INSERT INTO cashdesk_reversalrequest (original_id, reason, requested_by_id, requested_at, operation_key)"
            " VALUES (%s, 'wrong chips', %s, now(), %s) RETURNING id",
            [tx.pk, cashier.pk, key],
        ),
    )

    assert results == [302, 302]
    assert ReversalRequest.objects.get().operation_key == key


# --- Every desk operation sent twice: the first result again, one write --------------------------------------------


def _operation_forms(api: Any, floor: Any) -> dict[str, tuple[str, dict[str, str]]]:
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("40.00"), reason="hopper", user=floor)
    return {
        "sell": ("/desk/sell/", {"amount": "10.00"}),
        "chips": ("/desk/chips/", {"direction": "buy", "chip_25": "2"}),
        "tokens": ("/desk/tokens/", {"direction": "buy", "count": "5"}),
        "card load": ("/desk/smartcard/load/", {"card_number": "SC9", "amount": "20.00", "card_counter": "1"}),
        "card payout": ("/desk/smartcard/", {"card_number": "SC8", "credits": "20.00", "card_counter": "2"}),
        "receipt": ("/desk/receipt-payout/", {"receipt_number": str(receipt.number), "check_code": receipt.check_code}),
        "ticket pay": ("/desk/ticket/pay/", {"number": api.issued_ticket("15.00")}),
        "ticket hold": ("/desk/ticket/hold/", {"number": api.issued_ticket("16.00"), "reason": "damage"}),
        "transfer": ("/desk/transfer/", {"direction": "drop", "amount": "100.00"}),
    }


def _all_writes() -> dict[str, int]:
    from cashdesk.models import HoldCase

    return {
        "transactions": CashTransaction.objects.exclude(kind__in=["count", "opening_balance"]).count(),
        "transfers": Transfer.objects.count(),
        "holds": HoldCase.objects.count(),
    }


@pytest.mark.parametrize(
    "form", ["sell", "chips", "tokens", "card load", "card payout", "receipt", "ticket pay", "ticket hold", "transfer"]
)
def test_every_desk_operation_sent_twice_shows_the_first_result_and_writes_once(desk_client, api, floor, form):
    path, data = _operation_forms(api, floor)[form]
    sent = with_key(data)
    first = desk_client.post(path, sent)
    after_first = _all_writes()

    again = desk_client.post(path, sent)

    assert first.status_code == again.status_code == 302, (first.status_code, again.status_code)
    assert first["Location"] == again["Location"]
    assert _all_writes() == after_first
