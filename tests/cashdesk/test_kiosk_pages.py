"""The kiosks page (issue 14): who may open it, fills and drops asked for, approved and cancelled through it."""

import re
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk.books import place_balances
from cashdesk.items import Item
from cashdesk.models import Transfer
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_approve, kiosk_transfer_request
from machines.models import Machine, Place
from staff.models import StaffAssignment
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user

KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(
        casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK, area="Lobby", bank="KB", position="2"
    )


@pytest.fixture
def supervisor2(db):
    return make_user("aldona", "shift_supervisor")


@pytest.fixture
def staff(casino, cashier, supervisor, supervisor2, floor, compliance, manager):
    users = {
        "cashier": cashier,
        "supervisor": supervisor,
        "supervisor2": supervisor2,
        "floor": floor,
        "compliance": compliance,
        "manager": manager,
        "nobody": make_user("norole"),
    }
    for user in users.values():
        StaffAssignment.objects.create(user=user, casino=casino)
    return users


def login(user) -> Client:
    client = Client(raise_request_exception=False)  # a server error as the 500 a browser would get
    client.force_login(user)
    return client


def kiosk_cash(kiosk) -> Decimal:
    return place_balances(kiosk_place(kiosk))[Item.CASH]


def page_text(response) -> str:
    """The page's words without its tags, spaces joined: what a reader sees."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())).replace("\xa0", " ")


def ask(client: Client, kiosk, direction: str, amount: str, key: str = KEY):
    prefix = f"{direction}-{kiosk.pk}"
    return client.post(f"/kiosks/{kiosk.pk}/{direction}/", {f"{prefix}-amount": amount, f"{prefix}-operation_key": key})


def filled(kiosk, staff, amount: str = "5000.00") -> Transfer:
    transfer = kiosk_transfer_request(machine=kiosk, user=staff["floor"], direction="fill", amount=Decimal(amount))
    return kiosk_transfer_approve(transfer=transfer, supervisor=staff["supervisor"])


# Who may open what


@pytest.mark.parametrize("role", ["cashier", "manager", "compliance", "nobody"])
def test_the_kiosks_page_and_its_actions_are_refused_to_other_roles(staff, kiosk, stocked_vault, role):
    waiting = kiosk_transfer_request(machine=kiosk, user=staff["floor"], direction="fill", amount=Decimal("100.00"))
    client = login(staff[role])

    assert client.get("/kiosks/").status_code == 403
    assert ask(client, kiosk, "fill", "200.00", key="f" * 32).status_code == 403
    assert client.post(f"/kiosks/transfers/{waiting.pk}/approve/").status_code == 403
    assert client.post(f"/kiosks/transfers/{waiting.pk}/cancel/").status_code == 403
    waiting.refresh_from_db()
    assert waiting.state == "requested"
    assert Transfer.objects.count() == 1
    assert kiosk_cash(kiosk) == 0


def test_anonymous_visitors_are_sent_to_the_login(kiosk):
    for response in (Client().get("/kiosks/"), Client().post(f"/kiosks/{kiosk.pk}/fill/")):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_a_floor_attendant_may_ask_but_not_approve(staff, kiosk, stocked_vault):
    client = login(staff["floor"])
    ask(client, kiosk, "fill", "100.00")
    transfer = Transfer.objects.get()

    assert client.post(f"/kiosks/transfers/{transfer.pk}/approve/").status_code == 403
    assert "Approve" not in page_text(client.get("/kiosks/"))
    transfer.refresh_from_db()
    assert transfer.state == "requested"


def test_the_menu_shows_kiosks_to_floor_attendants_and_supervisors_only(staff):
    for role, page, shown in [
        ("floor", "/floor/receipts/", True),
        ("supervisor", "/supervisor/", True),
        ("cashier", "/desk/", False),
        ("manager", "/reports/", False),
        ("compliance", "/supervisor/", False),
    ]:
        home = login(staff[role]).get(page)
        assert home.status_code == 200, role
        assert ('href="/kiosks/"' in home.content.decode()) is shown, role


def test_actions_are_post_only(staff, kiosk, stocked_vault):
    transfer = kiosk_transfer_request(machine=kiosk, user=staff["floor"], direction="fill", amount=Decimal("100.00"))
    client = login(staff["supervisor"])
    for path in (
        f"/kiosks/{kiosk.pk}/fill/",
        f"/kiosks/{kiosk.pk}/drop/",
        f"/kiosks/transfers/{transfer.pk}/approve/",
        f"/kiosks/transfers/{transfer.pk}/cancel/",
    ):
        assert client.get(path).status_code == 405, path
    transfer.refresh_from_db()
    assert transfer.state == "requested"


# What the page shows


def test_the_page_shows_each_kiosk_its_cash_against_capacity_and_its_last_drop(
    api, casino, staff, kiosk, stocked_vault, other_casino
):
    filled(kiosk, staff)
    kiosk_api = MachineClient(kiosk)
    for amount in ("100.00", "20.505"):
        number = api.issued_ticket(amount)
        payout = kiosk_api.authorize(number).json()["payout"]
        assert kiosk_api.commit(number, dispensed=payout).status_code == 200
    drop = kiosk_transfer_request(machine=kiosk, user=staff["floor"], direction="drop", amount=Decimal("4870.00"))
    kiosk_transfer_approve(transfer=drop, supervisor=staff["supervisor2"])  # books said 4879.49: 9.49 short
    filled(kiosk, staff, amount="7500.00")
    MachineFactory(casino=casino, asset_number="K-OLD", kind=Machine.Kind.KIOSK, status=Machine.Status.RETIRED)
    MachineFactory(casino=other_casino, asset_number="K-ADM", kind=Machine.Kind.KIOSK)

    response = login(staff["floor"]).get("/kiosks/")

    assert response.status_code == 200
    text = page_text(response)
    assert "Kiosk K-01 Lobby · KB · 2" in text
    assert "€7,500.00 in the books, of €30,000.00" in text
    assert "25 %" in text  # 7 500 of 30 000
    assert 'max="30000.00" value="7500.00"' in response.content.decode()
    assert "Counted €4,870.00" in text
    assert "In the books €4,879.49" in text
    assert "Variance -€9.49 (short)" in text
    assert "Counted by tomas, approved by aldona." in text
    assert "K-OLD" not in text  # retired
    assert "K-ADM" not in text  # another casino's
    assert "1001" not in text  # a slot machine
    # The history: newest first, with who asked and who approved, and the drop's variance.
    history = text[text.index("Recent fills and drops") :]
    assert history.index("€7,500.00") < history.index("€4,870.00") < history.index("€5,000.00")
    assert "-€9.49 (short)" in history
    assert "approved by aldona" in history
    assert "approved by rasa" in history


def test_a_kiosk_never_filled_shows_nothing_held_and_is_not_given_a_place_by_looking(staff, kiosk):
    text = page_text(login(staff["supervisor"]).get("/kiosks/"))
    assert "€0.00 in the books, of €30,000.00" in text
    assert "No drop yet." in text
    assert not Place.objects.filter(machine=kiosk).exists()


def test_a_casino_without_kiosks_says_so(staff):
    assert "This casino has no kiosks." in page_text(login(staff["floor"]).get("/kiosks/"))


# Asking, approving, cancelling


def test_a_fill_asked_for_by_the_floor_is_approved_by_a_supervisor(staff, kiosk, stocked_vault):
    floor = login(staff["floor"])
    asked = ask(floor, kiosk, "fill", "5000.00")

    assert asked.status_code == 302
    assert asked["Location"] == f"/kiosks/#kiosk-{kiosk.pk}"
    transfer = Transfer.objects.get()
    assert (transfer.direction, transfer.amount, transfer.requested_by, transfer.state) == (
        "fill",
        Decimal("5000.00"),
        staff["floor"],
        "requested",
    )
    assert transfer.operation_key == KEY
    assert kiosk_cash(kiosk) == 0
    waiting = page_text(floor.get("/kiosks/"))
    assert "is asked for; a supervisor approves it." in waiting
    assert "Waiting for approval Fill: €5,000.00" in waiting
    assert "Ask for a fill" not in waiting  # one request waits at a time

    supervisor = login(staff["supervisor"])
    page = supervisor.get("/kiosks/").content.decode()
    assert f'action="/kiosks/transfers/{transfer.pk}/approve/"' in page
    approved = supervisor.post(f"/kiosks/transfers/{transfer.pk}/approve/")

    assert approved.status_code == 302
    transfer.refresh_from_db()
    assert (transfer.state, transfer.approved_by) == ("approved", staff["supervisor"])
    assert kiosk_cash(kiosk) == Decimal("5000.00")
    after = page_text(supervisor.get("/kiosks/"))
    assert "Fill of kiosk K-01 approved: €5,000.00 moved from the vault to the kiosk." in after
    assert "€5,000.00 in the books, of €30,000.00" in after


def test_a_drop_approved_shows_its_variance(api, staff, kiosk, stocked_vault):
    filled(kiosk, staff)
    kiosk_api = MachineClient(kiosk)
    number = api.issued_ticket("10.505")
    assert kiosk_api.commit(number, dispensed=kiosk_api.authorize(number).json()["payout"]).status_code == 200

    floor = login(staff["floor"])
    ask(floor, kiosk, "drop", "4980.00")
    transfer = Transfer.objects.get(direction="drop")
    # Who counted is not shown the difference (he could withdraw the count and ask again with the books' figure).
    assert "The books hold" not in page_text(floor.get("/kiosks/"))
    supervisor = login(staff["supervisor"])
    before = page_text(supervisor.get("/kiosks/"))
    assert "Waiting for approval Drop: €4,980.00 (counted) Asked for by tomas at" in before
    # The books hold 4 989.49: approving now sends 9.49 short to over/short.
    assert "The books hold €4,989.49: Variance -€9.49 (short)" in before
    supervisor.post(f"/kiosks/transfers/{transfer.pk}/approve/")

    after = page_text(supervisor.get("/kiosks/"))
    assert (
        "Drop of kiosk K-01 approved: counted €4,980.00, the books held €4,989.49; variance -€9.49."
        " The kiosk is at zero." in after
    )
    assert "€0.00 in the books" in after
    assert "Variance -€9.49 (short)" in after
    assert kiosk_cash(kiosk) == 0
    line = Transfer.objects.get(pk=transfer.pk).count.lines.get()
    assert (line.counted_amount, line.expected_amount, line.variance) == (
        Decimal("4980.00"),
        Decimal("4989.49"),
        Decimal("-9.49"),
    )


def test_a_drop_may_count_nothing_and_a_drop_over_shows_over(staff, kiosk, stocked_vault):
    filled(kiosk, staff, amount="100.00")
    ask(login(staff["floor"]), kiosk, "drop", "100.50")
    supervisor = login(staff["supervisor"])
    supervisor.post(f"/kiosks/transfers/{Transfer.objects.get(direction='drop').pk}/approve/")
    assert "Variance €0.50 (over)" in page_text(supervisor.get("/kiosks/"))

    filled(kiosk, staff, amount="40.00")
    ask(login(staff["floor"]), kiosk, "drop", "0", key="e" * 32)
    empty = Transfer.objects.get(direction="drop", approved_at__isnull=True)
    assert empty.amount == 0
    supervisor.post(f"/kiosks/transfers/{empty.pk}/approve/")
    assert "Variance -€40.00 (short)" in page_text(supervisor.get("/kiosks/"))
    assert kiosk_cash(kiosk) == 0


def test_a_supervisor_does_not_approve_what_he_asked_for(staff, kiosk, stocked_vault):
    supervisor = login(staff["supervisor"])
    ask(supervisor, kiosk, "fill", "300.00")
    transfer = Transfer.objects.get()
    page = supervisor.get("/kiosks/").content.decode()
    assert f"/kiosks/transfers/{transfer.pk}/approve/" not in page
    assert "Another supervisor approves what you asked for." in page

    refused = supervisor.post(f"/kiosks/transfers/{transfer.pk}/approve/", follow=True)

    assert refused.status_code == 200
    assert "A transfer is approved by someone other than who asked for it." in page_text(refused)
    transfer.refresh_from_db()
    assert transfer.state == "requested"
    login(staff["supervisor2"]).post(f"/kiosks/transfers/{transfer.pk}/approve/")
    assert kiosk_cash(kiosk) == Decimal("300.00")


def test_who_asked_or_a_supervisor_cancels_and_nothing_moves(casino, staff, kiosk, stocked_vault):
    floor = login(staff["floor"])
    ask(floor, kiosk, "fill", "100.00")
    first = Transfer.objects.get()
    assert f"/kiosks/transfers/{first.pk}/cancel/" in floor.get("/kiosks/").content.decode()
    cancelled = floor.post(f"/kiosks/transfers/{first.pk}/cancel/", follow=True)
    assert "The request was cancelled; no cash moved." in page_text(cancelled)
    first.refresh_from_db()
    assert (first.state, first.cancelled_by) == ("cancelled", staff["floor"])

    ask(login(staff["supervisor2"]), kiosk, "drop", "0", key="d" * 32)
    second = Transfer.objects.get(cancelled_at__isnull=True)
    # Another floor attendant may not withdraw it, nor see the button.
    other = make_user("jurgis", "floor_attendant")
    StaffAssignment.objects.create(user=other, casino=casino)
    other_client = login(other)
    assert f"/kiosks/transfers/{second.pk}/cancel/" not in other_client.get("/kiosks/").content.decode()
    refused = other_client.post(f"/kiosks/transfers/{second.pk}/cancel/", follow=True)
    assert "Only who asked for it, or a supervisor, cancels a transfer." in page_text(refused)
    second.refresh_from_db()
    assert second.state == "requested"

    login(staff["supervisor"]).post(f"/kiosks/transfers/{second.pk}/cancel/")
    second.refresh_from_db()
    assert (second.state, second.cancelled_by) == ("cancelled", staff["supervisor"])
    history = page_text(floor.get("/kiosks/"))
    assert history.count("cancelled by") == 2
    assert kiosk_cash(kiosk) == 0


def test_approving_twice_or_after_a_cancel_is_a_message_not_an_error(staff, kiosk, stocked_vault):
    ask(login(staff["floor"]), kiosk, "fill", "100.00")
    transfer = Transfer.objects.get()
    supervisor = login(staff["supervisor"])
    supervisor.post(f"/kiosks/transfers/{transfer.pk}/approve/")
    again = supervisor.post(f"/kiosks/transfers/{transfer.pk}/approve/", follow=True)
    assert again.status_code == 200
    assert "This transfer has already been approved." in page_text(again)
    cancel = supervisor.post(f"/kiosks/transfers/{transfer.pk}/cancel/", follow=True)
    assert "This transfer has already been approved." in page_text(cancel)
    assert kiosk_cash(kiosk) == Decimal("100.00")


def test_a_fill_the_vault_cannot_cover_is_refused_with_a_message(staff, kiosk, vault):
    ask(login(staff["floor"]), kiosk, "fill", "100.00")
    transfer = Transfer.objects.get()
    refused = login(staff["supervisor"]).post(f"/kiosks/transfers/{transfer.pk}/approve/", follow=True)
    assert refused.status_code == 200
    assert refused.redirect_chain[-1][0] == f"/kiosks/#kiosk-{kiosk.pk}"
    assert 'class="error"' in refused.content.decode()
    transfer.refresh_from_db()
    assert transfer.state == "requested"
    assert kiosk_cash(kiosk) == 0


# Bad input


@pytest.mark.parametrize(
    ("direction", "amount", "error"),
    [
        ("fill", "", "This field is required."),
        ("fill", "abc", "Type the amount with the digits 0-9."),
        ("fill", "0", "Ensure this value is greater than or equal to 0.01."),
        ("fill", "-5.00", "Type the amount with the digits 0-9."),
        ("fill", "10.005", "Ensure that there are no more than 2 decimal places."),
        ("fill", "\u0661\u0660", "Type the amount with the digits 0-9."),
        ("fill", "1e3", "Type the amount with the digits 0-9."),
        ("fill", "NaN", "Type the amount with the digits 0-9."),
        ("fill", "12345678901.00", "Ensure that there are no more than 12 digits in total."),
        ("fill", "30000.01", "holds €0.00 and takes at most €30,000.00: fill at most €30,000.00."),
        ("drop", "-0.01", "Type the amount with the digits 0-9."),
        ("drop", "1.001", "Ensure that there are no more than 2 decimal places."),
        ("drop", "100000.01", "A single transfer may be at most €100,000.00."),
    ],
)
def test_a_bad_amount_is_a_form_error_and_changes_nothing(staff, kiosk, stocked_vault, direction, amount, error):
    response = ask(login(staff["floor"]), kiosk, direction, amount)

    assert response.status_code == 200
    text = page_text(response)
    assert error in text
    assert '<ul class="errorlist' in response.content.decode()
    if amount and amount.isascii():
        assert f'value="{amount}"' in response.content.decode()  # what was typed stays
    assert not Transfer.objects.exists()
    assert not Place.objects.filter(machine=kiosk).exists() or kiosk_cash(kiosk) == 0


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ("", "This form has expired; open it again from the menu."),
        ("not-hex-not-hex-not-hex-not-hex", "This form has expired; open it again from the menu."),
        ("abc", "Ensure this value has at least 16 characters"),
    ],
)
def test_a_form_without_its_one_time_key_asks_nothing(staff, kiosk, stocked_vault, key, error):
    response = ask(login(staff["floor"]), kiosk, "fill", "100.00", key=key)
    assert response.status_code == 200
    assert error in page_text(response)
    assert not Transfer.objects.exists()


def test_a_second_request_while_one_waits_is_a_form_error(staff, kiosk, stocked_vault):
    floor = login(staff["floor"])
    ask(floor, kiosk, "fill", "100.00")
    response = ask(floor, kiosk, "drop", "0", key="c" * 32)
    assert response.status_code == 200
    assert "A fill or drop of this kiosk is waiting for approval: approve or cancel it." in page_text(response)
    assert Transfer.objects.count() == 1


def test_the_same_form_sent_twice_asks_once(staff, kiosk, stocked_vault):
    floor = login(staff["floor"])
    first = ask(floor, kiosk, "fill", "250.00")
    again = ask(floor, kiosk, "fill", "250.00")

    assert first.status_code == again.status_code == 302
    assert Transfer.objects.count() == 1
    assert "This form was already sent: nothing more was asked for." in page_text(floor.get("/kiosks/"))
    # Once approved, the same form again still asks nothing.
    login(staff["supervisor"]).post(f"/kiosks/transfers/{Transfer.objects.get().pk}/approve/")
    assert ask(floor, kiosk, "fill", "250.00").status_code == 302
    assert Transfer.objects.count() == 1
    assert kiosk_cash(kiosk) == Decimal("250.00")


def test_a_form_key_someone_else_used_is_refused(staff, kiosk, stocked_vault):
    ask(login(staff["floor"]), kiosk, "fill", "250.00")
    response = ask(login(staff["supervisor"]), kiosk, "fill", "250.00")
    assert response.status_code == 200
    assert "This form was already used by someone else." in page_text(response)
    assert Transfer.objects.count() == 1


# Tenancy


def test_another_casinos_kiosk_and_its_transfers_are_404(staff, kiosk, stocked_vault, other_casino):
    theirs = MachineFactory(casino=other_casino, asset_number="K-ADM", kind=Machine.Kind.KIOSK)
    their_supervisor = make_user("admiral-supervisor", "shift_supervisor")
    StaffAssignment.objects.create(user=their_supervisor, casino=other_casino)
    their_floor = make_user("admiral-floor", "floor_attendant")
    StaffAssignment.objects.create(user=their_floor, casino=other_casino)
    their_transfer = kiosk_transfer_request(
        machine=theirs, user=their_floor, direction="fill", amount=Decimal("100.00")
    )
    supervisor = login(staff["supervisor"])
    floor = login(staff["floor"])

    assert supervisor.post(f"/kiosks/transfers/{their_transfer.pk}/approve/").status_code == 404
    assert supervisor.post(f"/kiosks/transfers/{their_transfer.pk}/cancel/").status_code == 404
    assert floor.post(f"/kiosks/transfers/{their_transfer.pk}/cancel/").status_code == 404
    assert ask(floor, theirs, "drop", "0").status_code == 404
    their_transfer.refresh_from_db()
    assert their_transfer.state == "requested"
    assert Transfer.objects.count() == 1
    assert "K-ADM" not in page_text(supervisor.get("/kiosks/"))


def test_a_slot_machine_or_a_retired_kiosk_takes_no_fill(staff, kiosk, machine, stocked_vault, casino):
    retired = MachineFactory(casino=casino, asset_number="K-OLD", kind=Machine.Kind.KIOSK, status="retired")
    floor = login(staff["floor"])
    assert ask(floor, machine, "fill", "100.00").status_code == 404
    assert ask(floor, retired, "fill", "100.00", key="b" * 32).status_code == 404
    assert floor.post("/kiosks/999999/fill/").status_code == 404
    assert not Transfer.objects.exists()


def test_a_retired_kiosk_still_holding_cash_is_listed_to_be_dropped_and_takes_no_fill(staff, kiosk, stocked_vault):
    """The page and the dashboard list the same kiosks: retiring one with cash in it does not hide that cash."""
    filled(kiosk, staff, amount="1200.00")
    Machine.objects.filter(pk=kiosk.pk).update(status=Machine.Status.RETIRED)
    floor = login(staff["floor"])

    text = page_text(floor.get("/kiosks/"))
    assert "Kiosk K-01" in text
    assert "€1,200.00 in the books" in text
    assert "Ask for a drop" in text
    assert "Ask for a fill" not in text

    refused = ask(floor, kiosk, "fill", "100.00")
    assert refused.status_code == 200
    assert "A retired kiosk is not filled; the cash it still holds is dropped." in page_text(refused)
    assert Transfer.objects.filter(direction="fill").count() == 1  # the first fill only

    assert ask(floor, kiosk, "drop", "1200.00", key="d" * 32).status_code == 302
    drop = Transfer.objects.get(direction="drop")
    kiosk_transfer_approve(transfer=drop, supervisor=staff["supervisor"])
    assert kiosk_cash(kiosk) == Decimal("0.00")
