"""The transaction page shows its receipt to those who may see it."""

from decimal import Decimal

from cashdesk import services
from cashdesk.models import CashTransaction
from tests.cashdesk.conftest import logged_in_client
from tests.factories import make_user


def test_another_cashiers_receipt_is_not_shown(shift, cashier, cashier2, casino):
    """From the adversarial review of the issue 12 change (the receipt on the transaction page): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 3})
    response = logged_in_client(cashier2, casino).get(f"/desk/transactions/{tx.pk}/")
    assert response.status_code == 302
    assert tx.receipt_number not in response.content.decode()


def test_another_casinos_supervisor_gets_no_receipt(shift, cashier, other_casino):
    """From the adversarial review of the issue 12 change (the receipt on the transaction page): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 3})
    boss = make_user("kitas", "shift_supervisor")
    response = logged_in_client(boss, other_casino).get(f"/desk/transactions/{tx.pk}/")
    assert response.status_code == 404


def test_a_sold_ticket_and_its_payout_show_the_number_masked(desk_client, shift, cashier, person):
    """From the adversarial review of the issue 12 change (the receipt on the transaction page): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    sold = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    number = sold.ticket.validation_number
    html = desk_client.get(f"/desk/transactions/{sold.pk}/").content.decode()
    assert number not in html
    assert number[-4:] in html  # the masked form keeps the last digits
    assert person.surnames not in html  # only that a person was identified
    assert "person identified" in html


def test_a_reversal_shows_the_receipt_it_reverses(desk_client, shift, cashier, supervisor, casino):
    """From the adversarial review of the issue 12 change (the receipt on the transaction page): a probe a careless or
    hostile user could hit, kept as a regression test.
    """
    original = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 3})
    services.reversal_request(original=original, user=cashier, reason="wrong chips")
    reversal = CashTransaction.objects.filter(kind="reversal").first()
    if reversal is None:  # a reversal is booked when a supervisor approves it
        from cashdesk.models import ReversalRequest

        services.reversal_approve(request=ReversalRequest.objects.get(), supervisor=supervisor)
        reversal = CashTransaction.objects.get(kind="reversal")
    html = logged_in_client(supervisor, casino).get(f"/desk/transactions/{reversal.pk}/").content.decode()
    assert original.receipt_number in html
