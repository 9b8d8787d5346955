import pytest

from tickets.models import Ticket, TicketEvent


def test_printed_makes_the_ticket_valid(api):
    number = api.issue().json()["validation_number"]

    response = api.printed(number)

    assert response.status_code == 200
    assert response.json() == {"validation_number": number, "state": "issued"}
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == "issued"
    assert ticket.printed_at is not None
    assert list(ticket.events.values_list("kind", flat=True)) == ["issued", "printed"]


def test_print_failure_voids_the_ticket_with_the_reason(api):
    number = api.issue().json()["validation_number"]

    response = api.printed(number, result="failed", reason="paper_out")

    assert response.json() == {"validation_number": number, "state": "void"}
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.voided_at is not None
    event = ticket.events.get(kind="print_failed")
    assert event.reason == "paper_out"


def test_grouped_number_in_the_path_is_accepted(api):
    number = api.issue().json()["validation_number"]
    grouped = f"{number[:2]}-{number[2:6]}-{number[6:10]}-{number[10:14]}-{number[14:]}"
    assert api.printed(grouped).json()["state"] == "issued"


def test_only_the_issuing_machine_may_confirm(api, make_api):
    number = api.issue().json()["validation_number"]
    other = make_api(asset_number="2002")

    response = other.printed(number)

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert Ticket.objects.get(validation_number=number).state == "pending_print"


@pytest.mark.parametrize("result", ["printed", "failed"])
def test_confirming_twice_is_invalid_state(api, result):
    number = api.issue().json()["validation_number"]
    api.printed(number, result=result)

    response = api.printed(number)

    assert response.status_code == 409
    assert response.json()["code"] == "invalid_state"
    refusal = TicketEvent.objects.filter(ticket__validation_number=number, kind="refused").get()
    assert refusal.reason == "invalid_state"


def test_result_must_be_printed_or_failed(api, table_counts):
    number = api.issue().json()["validation_number"]
    before = table_counts()
    response = api.printed(number, result="maybe")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert table_counts() == before
