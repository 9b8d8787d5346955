"""The screens of the four eyes on counts: the waiting count on the supervisor's page and the dashboard, the
incoming cashier's own count of a hand-over, each decision with its one-time form key (issue 21)."""

from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import models, services
from cashdesk.books import place_balances
from cashdesk.models import CashTransaction, Shift, TransactionKind
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT, VAULT_CASH
from tests.factories import make_user


@pytest.fixture
def supervisor2(db):
    return make_user("laura", "shift_supervisor")


def _waiting():
    return models.CountRequest.objects.get(status="waiting")


def _open_shift_of(user):
    return Shift.objects.filter(cashier=user, closed_at__isnull=True).first()


def _key(page: str) -> str:
    return page.split('name="operation_key" value="')[1].split('"')[0]


def _client(user, casino) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    return client


def test_the_supervisors_page_and_the_dashboard_show_a_waiting_count_and_a_second_supervisor_approves_it(
    casino, stocked_vault, supervisor, supervisor2
):
    first = _client(supervisor, casino)
    form_key = _key(first.get("/supervisor/vault/").content.decode())
    response = first.post(
        "/supervisor/vault/", {**dict.fromkeys(FLOAT, "0"), "cash": "100.00", "operation_key": form_key}
    )
    assert response.status_code == 302
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH
    request = _waiting()

    second = _client(supervisor2, casino)
    page = second.get("/supervisor/").content.decode()
    assert f'action="/supervisor/counts/{request.pk}/approve/"' in page
    dashboard = second.get("/dashboard/").content.decode()
    assert 'id="counts-waiting"' in dashboard
    key = _key(page.split(f'action="/supervisor/counts/{request.pk}/approve/"')[1])

    own = first.post(f"/supervisor/counts/{request.pk}/approve/", {"operation_key": key})
    assert own.status_code == 302
    assert _waiting() == request
    approved = second.post(f"/supervisor/counts/{request.pk}/approve/", {"operation_key": key})
    assert approved.status_code == 302
    again = second.post(f"/supervisor/counts/{request.pk}/approve/", {"operation_key": key})
    assert again.status_code == 302
    assert place_balances(stocked_vault)["cash"] == Decimal("100.00")
    assert CashTransaction.objects.filter(kind=TransactionKind.COUNT).count() == 1


def test_a_decision_without_its_form_key_changes_nothing(casino, stocked_vault, supervisor, supervisor2):
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": Decimal("100.00")})
    request = _waiting()
    response = _client(supervisor2, casino).post(f"/supervisor/counts/{request.pk}/approve/", {})
    assert response.status_code == 302
    assert _waiting() == request


def test_the_incoming_cashier_counts_on_his_own_page_and_the_supervisor_decides_on_hers(
    casino, shift, cashier, cashier2, supervisor
):
    def client(user):
        return _client(user, casino)

    services.shift_handover(
        shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("25000")}, next_cashier=cashier2
    )
    incoming = client(cashier2)
    request = models.CountRequest.objects.get()
    home = incoming.get("/desk/").content.decode()
    assert f'href="/desk/handover/{request.pk}/count/"' in home
    page = incoming.get(f"/desk/handover/{request.pk}/count/").content.decode()
    for shown in ("25000", "25\u00a0000", "25,000"):  # blind: the outgoing figures are not shown
        assert shown not in page
    key = page.split('name="operation_key" value="')[1].split('"')[0]
    assert client(cashier).get(f"/desk/handover/{request.pk}/count/").status_code == 404

    posted = incoming.post(
        f"/desk/handover/{request.pk}/count/",
        {**{item: str(n) for item, n in FLOAT.items()}, "operation_key": key},
    )
    assert posted.status_code == 302
    request.refresh_from_db()
    assert request.status == "waiting"

    boss = client(supervisor)
    page = boss.get("/supervisor/").content.decode()
    key = page.split(f'action="/supervisor/counts/{request.pk}/approve/"')[1].split('name="operation_key" value="')[1]
    key = key.split('"')[0]
    boss.post(f"/supervisor/counts/{request.pk}/approve/", {"operation_key": key, "stands": "incoming"})
    request.refresh_from_db()
    assert (request.status, request.stands) == ("approved", "incoming")
    assert _open_shift_of(cashier2) == request.successor


def test_a_close_far_from_the_books_and_a_handover_from_the_desk_screen_wait(casino, shift, cashier, cashier2):
    desk_screen = _client(cashier, casino)
    figures = {item: str(n) for item, n in FLOAT.items()}
    closed = desk_screen.post("/desk/close/", {**figures, "cash": "15000.00"})
    assert closed.status_code == 302
    assert closed["Location"] == "/desk/"  # not the shift's summary: it is not closed
    assert _waiting().kind == "closing"
    assert Shift.objects.get(pk=shift.pk).closed_at is None

    models.CountRequest.objects.update(
        status="rejected", decided_by=make_user("boss", "shift_supervisor"), decided_at=shift.opened_at
    )
    _client(cashier2, casino)  # he works in this casino too
    key = _key(desk_screen.get("/desk/handover/").content.decode())
    handed = desk_screen.post("/desk/handover/", {**figures, "next_cashier": str(cashier2.pk), "operation_key": key})
    assert handed.status_code == 302
    again = desk_screen.post("/desk/handover/", {**figures, "next_cashier": str(cashier2.pk), "operation_key": key})
    assert again.status_code == 302  # the same form again: its first result, nothing more
    assert models.CountRequest.objects.filter(kind="handover").count() == 1
    assert models.CountRequest.objects.get(kind="handover").status == "counting"
    assert _open_shift_of(cashier2) is None
    assert "nothing more is done in it until then" in desk_screen.get("/desk/").content.decode()
