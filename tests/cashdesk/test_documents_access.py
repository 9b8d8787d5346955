"""Who may print which paper (issue 11, finding 1): vouchers, receipts, machine receipts; masked numbers."""

from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.models import CashTransaction
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.cashdesk.test_printing import pdf_text
from tests.factories import make_user
from tickets.models import Ticket, TicketEvent
from tickets.numbers import display_validation_number


def _client(user, casino) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


@pytest.fixture
def sale(shift, cashier):
    return services.ticket_sell(shift=shift, user=cashier, amount=Decimal("250.00"))


@pytest.fixture
def second_cashier(casino):
    """Another cashier with an open shift at another desk of the same casino."""
    user = make_user("antanas", "cashier")
    desk = Place.objects.create(casino=casino, code="K2", name="Kasa 2", cash_limit=Decimal("500000.00"))
    services.shift_open(desk=desk, cashier=user, counted=FLOAT)
    return user


def _reprint(client: Client, number: str, reason: str):
    return client.post("/supervisor/tickets/reprint/", {"reprint-number": number, "reprint-reason": reason})


def _walk(client: Client, template: str, upto: int) -> dict[int, int]:
    return {pk: client.get(template.format(pk=pk)).status_code for pk in range(1, upto + 1)}


def test_the_seller_prints_the_voucher_while_the_shift_is_open(sale, cashier, casino):
    client = _client(cashier, casino)
    response = client.get(f"/documents/voucher/{sale.ticket_id}.pdf")
    assert response.status_code == 200
    text = pdf_text(response.content)
    assert display_validation_number(sale.ticket.validation_number) in text  # the voucher: the one full number
    assert "KOPIJA" not in text


def test_another_cashier_walking_the_ids_gets_no_voucher_and_no_receipt(sale, second_cashier, casino):
    client = _client(second_cashier, casino)
    last_ticket = Ticket.objects.order_by("-pk").first().pk
    assert set(_walk(client, "/documents/voucher/{pk}.pdf", last_ticket + 3).values()) == {404}
    last_tx = CashTransaction.objects.order_by("-pk").first().pk
    own = set(CashTransaction.objects.filter(created_by=second_cashier).values_list("pk", flat=True))
    walked = _walk(client, "/documents/receipt/{pk}.pdf", last_tx + 3)
    assert {pk for pk, status in walked.items() if status == 200} == own  # his own shift's opening count
    assert {status for pk, status in walked.items() if pk not in own} == {404}


def test_a_supervisor_cannot_fetch_a_voucher_by_its_id(sale, supervisor, casino):
    assert _client(supervisor, casino).get(f"/documents/voucher/{sale.ticket_id}.pdf").status_code == 403


def test_after_the_shift_closes_the_seller_cannot_print_it_again(sale, shift, cashier, casino):
    shift.closed_at = shift.opened_at
    shift.save(update_fields=["closed_at"])
    assert _client(cashier, casino).get(f"/documents/voucher/{sale.ticket_id}.pdf").status_code == 404


def test_a_supervisor_reprints_with_a_reason_and_the_copy_is_recorded(sale, supervisor, casino):
    client = _client(supervisor, casino)
    number = sale.ticket.validation_number
    refused = _reprint(client, number, "")
    assert refused.status_code == 302
    assert not TicketEvent.objects.filter(kind="reprinted").exists()
    response = _reprint(client, number, "Printer jammed")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    text = pdf_text(response.content)
    assert "KOPIJA / COPY" in text
    assert display_validation_number(number) in text
    event = TicketEvent.objects.get(kind="reprinted")
    assert (event.ticket_id, event.user, event.reason) == (sale.ticket_id, supervisor, "Printer jammed")


def test_only_supervisors_reprint_and_only_a_valid_desk_ticket(sale, cashier, supervisor, casino, api):
    number = sale.ticket.validation_number
    by_cashier = _reprint(_client(cashier, casino), number, "x")
    assert by_cashier.status_code == 403
    client = _client(supervisor, casino)
    machine_ticket = api.issued_ticket("5.00")  # printed by a machine: no desk voucher to reprint
    for other in (machine_ticket, "123"):
        response = _reprint(client, other, "x")
        assert response.status_code == 302, other
    Ticket.objects.filter(pk=sale.ticket_id).update(state="void", voided_at=sale.created_at)
    assert _reprint(client, number, "x").status_code == 302
    assert not TicketEvent.objects.filter(kind="reprinted").exists()


def test_receipts_go_to_their_cashier_supervisors_and_managers(sale, cashier, supervisor, manager, floor, casino):
    url = f"/documents/receipt/{sale.pk}.pdf"
    for user in (cashier, supervisor, manager):
        assert _client(user, casino).get(url).status_code == 200, user.username
    assert _client(floor, casino).get(url).status_code == 403


def test_receipts_show_a_ticket_number_masked_but_for_its_last_four_digits(api, shift, cashier, casino):
    number = api.issued_ticket("40.00")
    payout = services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    text = pdf_text(_client(cashier, casino).get(f"/documents/receipt/{payout.pk}.pdf").content)
    assert number not in text.replace("-", "")
    assert display_validation_number(number) not in text
    assert f"**-****-****-****-{number[-4:]}" in text


def test_reports_show_ticket_numbers_masked(api, shift, cashier, supervisor, casino):
    held = api.issued_ticket("40.00")
    services.ticket_hold(shift=shift, user=cashier, validation_number=held, reason="damage", note="torn")
    paid = api.issued_ticket("30.00")
    assert api.authorize(paid).status_code == 200
    assert api.commit(paid).status_code == 200
    assert api.authorize(paid).status_code == 409  # a second presentation: an exception in the report
    client = _client(supervisor, casino)
    for path, number in (("/reports/?report=exceptions", paid), ("/supervisor/", held)):
        page = client.get(path).content.decode()
        assert number not in page, path
        assert display_validation_number(number) not in page, path
        assert f"{number[-4:]}" in page, path


def test_machine_receipts_go_to_who_recorded_or_paid_them(api, floor, shift, cashier, second_cashier, casino):
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("1.00"), reason="r", user=floor)
    url = f"/documents/machine-receipt/{receipt.pk}.pdf"
    assert _client(floor, casino).get(url).status_code == 200
    other_floor = make_user("jurgis", "floor_attendant")
    assert _client(other_floor, casino).get(url).status_code == 404
    assert _client(cashier, casino).get(url).status_code == 404  # not his until he pays it
    services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert _client(cashier, casino).get(url).status_code == 200
    assert _client(second_cashier, casino).get(url).status_code == 404


def test_a_voided_sale_has_no_voucher_even_for_its_seller(sale, cashier, casino):
    Ticket.objects.filter(pk=sale.ticket_id).update(state="void", voided_at=sale.created_at)
    assert _client(cashier, casino).get(f"/documents/voucher/{sale.ticket_id}.pdf").status_code == 404


def test_every_print_of_the_original_is_recorded(sale, cashier, casino):
    client = _client(cashier, casino)
    for _ in range(2):
        assert client.get(f"/documents/voucher/{sale.ticket_id}.pdf").status_code == 200
    printed = TicketEvent.objects.filter(ticket_id=sale.ticket_id, kind="voucher_printed")
    assert [(event.user, event.details) for event in printed] == [(cashier, {"copy": False})] * 2


def test_the_admin_shows_ticket_numbers_masked(sale, casino, api):
    from django.contrib.auth.models import User

    from tests.factories import make_user

    number = sale.ticket.validation_number
    admin = make_user("admin-x")
    User.objects.filter(pk=admin.pk).update(is_staff=True, is_superuser=True)
    client = _client(User.objects.get(pk=admin.pk), casino)
    pages = [
        "/admin/tickets/ticket/",
        f"/admin/tickets/ticket/{sale.ticket_id}/change/",
        "/admin/tickets/ticketevent/",
        f"/admin/cashdesk/cashtransaction/{sale.pk}/change/",
    ]
    for path in pages:
        page = client.get(path)
        assert page.status_code == 200, path
        assert number not in page.content.decode(), path
        assert number[-4:] in page.content.decode(), path
    assert client.get("/admin/tickets/ticket/", {"q": number}).context["cl"].result_count == 1  # found by the number
    assert client.get("/admin/tickets/ticket/", {"q": number[-6:]}).context["cl"].result_count == 0
    assert number not in str(sale.ticket)
