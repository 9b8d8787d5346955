# ruff: noqa: F811  (the fixtures of test_day_total, imported by name)
"""From the adversarial review of issue 26's day's total: the defects it found (each failed before its fix) and the
suspicions that held (marked "# holds")."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction
from cashdesk.services.tables import table_buy_in, table_open
from compliance.models import RegisterEntry
from compliance.services import register_correct
from compliance.services.entry import bar_person
from tests.cashdesk.conftest import logged_in_client
from tests.cashdesk.test_day_total import admit, card, door_default, second_shift  # noqa: F401 (fixtures)
from tests.cashdesk.test_table_day import FLOAT as TRAY
from tests.factories import make_person, with_key
from tests.races import race

pytestmark = pytest.mark.django_db


def _three_purchases(shift, cashier, visit):
    first = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 4}, identity=card(visit))
    second = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 4}, identity=card(visit))
    third = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 4}, identity=card(visit))
    return first, second, third


# --- Defects found, fixed -----------------------------------------------------------------------------------------


def test_a_correction_of_a_day_total_entry_keeps_the_days_total_and_the_earlier_purchases(
    door_default, shift, cashier, compliance, casino
):
    """A compliance officer corrects a register entry written for the day's total (say, a typo found in the note):
    the correction, which supersedes the entry, must still say the purchase entered the register for the day's
    total and which earlier purchases it passed with. register_correct copies neither."""
    visit = admit(casino, make_person())
    first, second, third = _three_purchases(shift, cashier, visit)
    entry = RegisterEntry.objects.get(transaction_id=third.pk)
    assert (entry.day_total, entry.earlier_transactions) == (Decimal("1200.00"), [first.pk, second.pk])

    corrected = register_correct(entry=entry, user=compliance, note="cashier's note corrected")

    assert corrected.day_total == Decimal("1200.00")
    assert corrected.earlier_transactions == [first.pk, second.pk]


def _officer(casino, compliance):
    client = logged_in_client(compliance, casino)
    client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    return client


def test_the_register_export_shows_the_days_total_and_the_earlier_purchases(
    door_default, shift, cashier, compliance, casino
):
    """The register the regulator is given (the CSV export) shows a purchase of 400 EUR with nothing saying why a
    400 EUR purchase is in the register: the day's total and the earlier purchases are stored, never exported."""
    visit = admit(casino, make_person())
    _three_purchases(shift, cashier, visit)
    exported = _officer(casino, compliance).post("/compliance/export/", {"format": "csv"})
    assert exported.status_code == 200
    header, *_rows = list(csv.reader(io.StringIO(exported.content.decode())))
    assert "day_total" in header
    assert "earlier_transactions" in header


def test_the_register_page_shows_the_days_total_beside_the_purchase(door_default, shift, cashier, compliance, casino):
    visit = admit(casino, make_person())
    _three_purchases(shift, cashier, visit)
    page = _officer(casino, compliance).get("/compliance/").content.decode()
    assert "day's total" in page
    assert "1,200.00" in page


def test_a_person_barred_after_admission_buys_no_more_chips_with_the_visit_card(
    door_default, shift, cashier, manager, casino
):
    """Admitted at 20:00, barred by a manager at 21:00 (from today): the visit card still buys chips at the desk,
    whereas the door refuses the same person. The desk's link to the visit checks no bar."""
    from staff.models import StaffAssignment

    person = make_person()
    visit = admit(casino, person)
    StaffAssignment.objects.create(user=manager, casino=casino)
    bar_person(
        casino=casino,
        person=person,
        user=manager,
        reason="violent behaviour at table AR1",
        starts_on=casino.gaming_day(timezone.now()),
    )
    with pytest.raises(CashDeskError):
        services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 1}, identity=card(visit))
    assert not CashTransaction.objects.filter(kind="chips_buy").exists()


def _readmit(visit):
    """The same person through the same door again, by the receptionist who admitted them."""
    from compliance.services import IdentityDetails
    from compliance.services.entry import entry_decide

    decision = entry_decide(
        entrance=visit.entrance, user=visit.admitted_by, details=IdentityDetails(), person=visit.person
    )
    assert decision.admitted, decision.message
    return decision.visit


# --- Suspicions that held -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        "1" * 10_000,
        "12345\x006789",
        "\x00",
        "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669\u0660\u0661\u0662",  # Arabic-Indic digits
        "\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19\uff10\uff11\uff12",  # full-width digits
        " ",
        "-1",
        "1e5",
    ],
)
def test_hostile_visit_card_input_is_a_clear_refusal_never_a_500(door_default, shift, cashier, casino, typed):
    # holds
    admit(casino, make_person())
    client = logged_in_client(cashier, casino, raise_errors=True)
    for field in ("visit_card", "visitor"):
        page = client.post("/desk/chips/", with_key({"direction": "buy", "chip_100": "2", field: typed}))
        assert page.status_code == 200
    assert not CashTransaction.objects.filter(kind="chips_buy").exists()


def test_a_visitor_of_another_casino_picked_on_the_desks_form_is_refused_and_not_offered(
    door_default, shift, cashier, casino, other_casino
):
    # holds
    elsewhere = admit(other_casino, make_person(given_names="Ona", document_number="LT7654321", born="1970-01-02"))
    client = logged_in_client(cashier, casino, raise_errors=True)
    page = client.get("/desk/chips/").content.decode()
    assert elsewhere.card not in page
    assert "1970-01-02" not in page
    refused = client.post("/desk/chips/", with_key({"direction": "buy", "chip_100": "2", "visitor": elsewhere.card}))
    assert refused.status_code == 200
    assert not CashTransaction.objects.filter(kind="chips_buy").exists()


def test_the_day_total_is_exactly_strict_at_the_threshold(door_default, shift, cashier, casino):
    # holds: 1000.00 over the day is not entered, 1000.01 is.
    visit = admit(casino, make_person())
    services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 1}, identity=card(visit))
    services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 1}, identity=card(visit))
    assert not RegisterEntry.objects.exists()
    last = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("0.01"), identity=card(visit))
    assert RegisterEntry.objects.get().transaction_id == last.pk


def test_the_gaming_day_boundary_splits_the_day_total_at_the_start_hour(door_default, shift, cashier, casino):
    # holds: 600 at 05:55 and 600 at 06:05 (local, start hour 6) are two gaming days; 600 at 06:05 and 600 at
    # 05:55 the next morning are one.
    zone = casino.zoneinfo
    day = timezone.localdate() + dt.timedelta(days=1)
    with time_machine.travel(dt.datetime.combine(day, dt.time(5, 50), tzinfo=zone), tick=False):
        night = admit(casino, make_person())
        services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 6}, identity=card(night))
    with time_machine.travel(dt.datetime.combine(day, dt.time(6, 5), tzinfo=zone), tick=False):
        with pytest.raises(CashDeskError, match="another gaming day"):
            services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 6}, identity=card(night))
        morning = _readmit(night)
        services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 6}, identity=card(morning))
    assert not RegisterEntry.objects.exists()
    with time_machine.travel(dt.datetime.combine(day + dt.timedelta(days=1), dt.time(5, 55), tzinfo=zone), tick=False):
        last = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 6}, identity=card(morning))
    entry = RegisterEntry.objects.get()
    assert (entry.transaction_id, entry.day_total) == (last.pk, Decimal("1200.00"))


@pytest.mark.django_db(transaction=True)
def test_a_desk_purchase_and_a_table_buy_in_by_one_person_at_once_are_added_up(
    door_default, shift, cashier, casino, table, croupier, pit_supervisor
):
    # holds: the person's row serialises a desk and a table as it does two desks.
    visit = admit(casino, make_person())
    session = table_open(table=table, croupier=croupier, pieces=TRAY, user=pit_supervisor)
    calls = [
        lambda: services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 6}, identity=card(visit)),
        lambda: table_buy_in(
            session=session,
            cash=Decimal("600.00"),
            pieces={"chip_100": 6},
            seat=2,
            user=pit_supervisor,
            identity=card(visit),
        ),
    ]
    results = race(calls, gate=("SELECT 1 FROM compliance_person WHERE id = %s FOR UPDATE", [visit.person_id]))
    assert not [r for r in results if isinstance(r, Exception)], results
    entry = RegisterEntry.objects.get()
    assert entry.day_total == Decimal("1200.00")
    assert len(entry.earlier_transactions) == 1


def test_a_pit_supervisor_of_one_casino_cannot_link_a_buy_in_to_another_casinos_visit(
    door_default, casino, other_casino, table, croupier, pit_supervisor
):
    # holds
    elsewhere = admit(other_casino, make_person(given_names="Ona", document_number="LT7654321", born="1970-01-02"))
    session = table_open(table=table, croupier=croupier, pieces=TRAY, user=pit_supervisor)
    with pytest.raises(CashDeskError, match="No visitor was admitted"):
        table_buy_in(
            session=session,
            cash=Decimal("100.00"),
            pieces={"chip_100": 1},
            seat=1,
            user=pit_supervisor,
            identity=card(elsewhere),
        )
    client = logged_in_client(pit_supervisor, casino, raise_errors=True)
    form = {"seat": "1", "amount": "100.00", "chip_100": "1", "visitor": elsewhere.card}
    page = client.post(f"/pit/sessions/{session.pk}/buy-in/", with_key(form))
    assert page.status_code in (200, 404)
    assert not CashTransaction.objects.filter(kind="table_buy_in").exists()


def test_a_reversed_purchase_that_passed_the_threshold_is_not_counted_again(
    door_default, shift, cashier, supervisor, casino
):
    # holds: the entry written for the purchase stays; the day's total after the reversal no longer counts it.
    visit = admit(casino, make_person())
    *_earlier, third = _three_purchases(shift, cashier, visit)
    asked = services.reversal_request(original=third, user=cashier, reason="wrong amount")
    services.reversal_approve(request=asked, supervisor=supervisor)
    services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 2}, identity=card(visit))
    assert list(RegisterEntry.objects.values_list("transaction_id", flat=True)) == [third.pk]
