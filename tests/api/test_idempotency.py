from tickets.models import Ticket


def test_replayed_issue_returns_the_first_answer_and_changes_nothing(api, table_counts):
    body = {"request_id": "cashout-77", "amount": "50.00"}
    first = api.post("tickets/issue", body)
    counts = table_counts()

    again = api.post("tickets/issue", body)

    assert again.status_code == first.status_code == 201
    assert again.json() == first.json()
    assert table_counts() == counts
    assert Ticket.objects.count() == 1


def test_same_request_id_with_a_different_body_is_reused(api, table_counts):
    api.post("tickets/issue", {"request_id": "cashout-77", "amount": "50.00"})
    counts = table_counts()

    response = api.post("tickets/issue", {"request_id": "cashout-77", "amount": "60.00"})

    assert response.status_code == 409
    assert response.json()["code"] == "request_id_reused"
    assert table_counts() == counts


def test_same_request_id_on_another_endpoint_is_reused(api):
    number = api.issue().json()["validation_number"]
    api.post(f"tickets/{number}/printed", {"request_id": "x-1", "result": "printed"})
    response = api.post(f"tickets/{number}/authorize", {"request_id": "x-1"})
    assert response.json()["code"] == "request_id_reused"
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_request_ids_are_per_machine(api, make_api):
    other = make_api(asset_number="2002")
    body = {"request_id": "same", "amount": "5.00"}
    first = api.post("tickets/issue", body).json()
    second = other.post("tickets/issue", body).json()
    assert first["validation_number"] != second["validation_number"]


def test_replayed_authorize_after_commit_returns_the_authorize_answer(api):
    number = api.issued_ticket()
    authorize = {"request_id": "auth-1"}
    first = api.post(f"tickets/{number}/authorize", authorize)
    api.commit(number)

    again = api.post(f"tickets/{number}/authorize", authorize)

    assert again.status_code == 200
    assert again.json() == first.json()
    assert Ticket.objects.get(validation_number=number).state == "redeemed"


def test_replayed_refusal_returns_the_same_refusal_without_a_second_event(api):
    number = api.issued_ticket()
    api.authorize(number)
    api.commit(number)
    body = {"request_id": "again-1"}
    first = api.post(f"tickets/{number}/authorize", body)
    refusals = Ticket.objects.get(validation_number=number).events.filter(kind="refused").count()

    again = api.post(f"tickets/{number}/authorize", body)

    assert (again.status_code, again.json()) == (first.status_code, first.json()) == (409, first.json())
    assert first.json()["code"] == "already_redeemed"
    assert Ticket.objects.get(validation_number=number).events.filter(kind="refused").count() == refusals


def test_grouped_and_bare_number_are_the_same_request(api):
    number = api.issue().json()["validation_number"]
    grouped = f"{number[:2]} {number[2:6]} {number[6:10]} {number[10:14]} {number[14:]}"
    first = api.post(f"tickets/{number}/printed", {"request_id": "p-1", "result": "printed"})
    again = api.post(f"tickets/{grouped}/printed", {"request_id": "p-1", "result": "printed"})
    assert again.status_code == 200
    assert again.json() == first.json()


def test_input_errors_are_not_remembered(api):
    bad = api.post("tickets/issue", {"request_id": "fix-me", "amount": "-1"})
    assert bad.json()["code"] == "invalid_amount"
    corrected = api.post("tickets/issue", {"request_id": "fix-me", "amount": "1.00"})
    assert corrected.status_code == 201
