"""Issue 13: handpays, machine receipts the machine asks for: requested -> confirmed -> paid, or void."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone
from stdnum import damm

from cashdesk import printing, services
from cashdesk.errors import CashDeskError
from cashdesk.models import MachineReceipt
from cashdesk.receipt_numbers import display_receipt_number, parse_receipt_number
from cashdesk.services.handpays import handpay_confirm, handpay_request, handpay_void
from casino_office.money import format_money
from compliance.models import Alert, RegisterEntry
from staff.models import StaffAssignment
from tests.factories import with_key


def _request(machine, amount="12500.00", kind="jackpot", request_id="hp-1") -> MachineReceipt:
    return handpay_request(machine=machine, amount=Decimal(amount), kind=kind, request_id=request_id)


def _confirm(receipt, floor, key="a" * 32) -> MachineReceipt:
    return handpay_confirm(receipt_id=receipt.pk, casino_id=receipt.casino_id, user=floor, operation_key=key)


def _login(user, casino) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    return client


# --- Numbers ---------------------------------------------------------------------------


def test_a_handpay_gets_a_random_number_with_a_check_digit_and_a_check_code(machine):
    receipt = _request(machine)
    assert len(receipt.number) == 13
    assert receipt.number[0] != "0"
    assert damm.is_valid(receipt.number)
    assert len(receipt.check_code) == 6
    assert (receipt.source, receipt.kind, receipt.state, receipt.created_by) == (
        "machine",
        "jackpot",
        "requested",
        None,
    )


def test_typed_receipt_numbers_are_read_as_stored():
    new = "1234567890123"
    valid = new[:-1] + damm.calc_check_digit(new[:-1])
    assert parse_receipt_number(valid) == valid
    assert parse_receipt_number(display_receipt_number(valid)) == valid  # as printed, in groups
    assert parse_receipt_number(valid[:-1] + str((int(valid[-1]) + 1) % 10)) is None  # a wrong check digit
    # Old receipts keep their short numbers: typed bare, with zeros or as printed (TOR-R000123).
    assert parse_receipt_number("123") == parse_receipt_number("000123") == parse_receipt_number("TOR-R000123") == "123"
    for bad in ("", "0", "abc", "١٢٣", "12345678901", "12345678901234"):
        assert parse_receipt_number(bad) is None


def test_an_old_short_receipt_number_is_still_paid(machine, floor, shift, cashier):
    # A receipt printed before the random numbers (its number kept by the migration).
    receipt = services.machine_receipt_record(machine=machine, amount=Decimal("20.00"), reason="hopper", user=floor)
    MachineReceipt.objects.filter(pk=receipt.pk).update(number="42")
    tx = services.machine_receipt_pay(shift=shift, user=cashier, number="000042", check_code=receipt.check_code)
    assert MachineReceipt.objects.get(pk=receipt.pk).paid_by == tx


# --- The steps ---------------------------------------------------------------------------


def test_a_requested_handpay_is_not_paid_until_confirmed_at_the_machine(machine, floor, shift, cashier, person):
    receipt = _request(machine)
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(
            shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code, person=person
        )
    assert refused.value.code == "not_confirmed"
    assert "not confirmed at the machine yet" in refused.value.message
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "requested"


def test_a_12500_eur_jackpot_is_confirmed_then_paid_to_an_identified_person(
    machine, floor, shift, cashier, person, casino
):
    receipt = _request(machine)
    confirmed = _confirm(receipt, floor)
    assert (confirmed.state, confirmed.confirmed_by, confirmed.confirmed_at is not None) == ("confirmed", floor, True)

    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert refused.value.code == "identity_required"

    tx = services.machine_receipt_pay(
        shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code, person=person
    )
    paid = MachineReceipt.objects.get(pk=receipt.pk)
    assert (paid.state, paid.paid_by, paid.paid_at) == ("paid", tx, tx.created_at)
    assert (tx.kind, tx.amount, tx.person) == ("receipt_payout", Decimal("12500.00"), person)
    entry = RegisterEntry.objects.get(transaction_id=tx.pk)
    assert (entry.kind, entry.amount) == ("receipt_payout", Decimal("12500.00"))
    assert Alert.objects.filter(casino=casino, person=person).exists()


def test_a_handpay_with_a_fraction_of_a_cent_is_paid_rounded_up(machine, floor, shift, cashier):
    receipt = _request(machine, amount="10.001", kind="cancelled_credits")
    _confirm(receipt, floor)
    tx = services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert tx.amount == Decimal("10.01")


def test_a_handpay_is_paid_once(machine, floor, shift, cashier):
    receipt = _request(machine, amount="100.00")
    _confirm(receipt, floor)
    services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert refused.value.code == "already_paid"


def test_confirming_twice_with_the_same_form_confirms_once_and_another_confirmation_is_refused(machine, floor):
    receipt = _request(machine)
    first = _confirm(receipt, floor, key="b" * 32)
    again = _confirm(receipt, floor, key="b" * 32)
    assert again.confirmed_at == first.confirmed_at
    with pytest.raises(CashDeskError) as refused:
        _confirm(receipt, floor, key="c" * 32)
    assert refused.value.code == "not_requested"


def test_only_floor_attendants_confirm_and_only_supervisors_void(machine, cashier, floor):
    receipt = _request(machine)
    with pytest.raises(CashDeskError):
        _confirm(receipt, cashier)
    with pytest.raises(CashDeskError):
        handpay_void(receipt_id=receipt.pk, casino_id=receipt.casino_id, user=floor, reason="x")


def test_a_supervisor_voids_an_unpaid_handpay_with_a_reason_and_it_is_not_paid(
    machine, floor, supervisor, shift, cashier
):
    receipt = _request(machine)
    with pytest.raises(CashDeskError) as refused:
        handpay_void(receipt_id=receipt.pk, casino_id=receipt.casino_id, user=supervisor, reason="  ")
    assert refused.value.code == "reason_required"
    _confirm(receipt, floor)
    void = handpay_void(receipt_id=receipt.pk, casino_id=receipt.casino_id, user=supervisor, reason="meter error")
    assert (void.state, void.voided_by, void.void_reason) == ("void", supervisor, "meter error")
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert refused.value.code == "void"
    # A new handpay may be requested once the old one is no longer `requested`.
    assert _request(machine, request_id="hp-2").state == "requested"


def test_a_paid_handpay_cannot_be_voided(machine, floor, supervisor, shift, cashier):
    receipt = _request(machine, amount="50.00")
    _confirm(receipt, floor)
    services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    with pytest.raises(CashDeskError) as refused:
        handpay_void(receipt_id=receipt.pk, casino_id=receipt.casino_id, user=supervisor, reason="late")
    assert refused.value.code == "not_voidable"


def test_one_requested_handpay_per_machine(machine, casino):
    _request(machine)
    with pytest.raises(CashDeskError) as refused:
        _request(machine, request_id="hp-2")
    assert refused.value.code == "handpay_pending"


# --- The database keeps the steps consistent ------------------------------------------------


def test_the_database_refuses_a_second_requested_handpay_of_a_machine(machine):
    receipt = _request(machine)
    with pytest.raises(IntegrityError, match="machinereceipt_one_requested_per_machine"), transaction.atomic():
        MachineReceipt.objects.create(
            casino=receipt.casino,
            machine=machine,
            number="1" * 13,
            check_code="1",
            amount=Decimal("1.00"),
            source="machine",
            kind="jackpot",
            state="requested",
            request_id="other",
            created_at=timezone.now(),
        )


@pytest.mark.parametrize(
    "change",
    [
        {"state": "confirmed"},  # no confirmed_by / confirmed_at
        {"state": "paid"},  # no paid_by
        {"state": "void"},  # no who, when, reason
        {"created_by": None, "source": "floor"},  # a floor receipt has its attendant
        {"kind": "floor"},  # a machine's handpay is a jackpot or cancelled credits
        {"number": "12a"},
    ],
)
def test_the_database_refuses_states_without_their_fields(machine, change):
    receipt = _request(machine)
    with pytest.raises(IntegrityError), transaction.atomic():
        MachineReceipt.objects.filter(pk=receipt.pk).update(**change)


# --- Screens ----------------------------------------------------------------------------


def test_the_floor_screen_lists_requested_handpays_newest_first_and_confirms_one(casino, make_api, floor):
    older = _request(make_api(asset_number="2001").machine, amount="1500.00")
    newer = _request(make_api(asset_number="2002").machine, amount="2500.00", kind="cancelled_credits")
    client = _login(floor, casino)
    page = client.get("/floor/receipts/").content.decode()
    assert "Confirm at the machine" in page
    assert page.index("2002") < page.index("2001")
    assert format_money(Decimal("2500.00")) in page
    assert "Cancelled credits" in page

    response = client.post(f"/floor/handpays/{older.pk}/confirm/", with_key({}))
    assert response.status_code == 302
    assert response["Location"] == f"/floor/receipts/{older.pk}.pdf"
    assert MachineReceipt.objects.get(pk=older.pk).state == "confirmed"
    pdf = client.get(response["Location"])
    assert pdf.status_code == 200
    assert pdf["Content-Type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF")
    # The requested one is not printed yet: no receipt before the attendant saw the machine.
    assert client.get(f"/floor/receipts/{newer.pk}.pdf").status_code == 404


def test_a_confirmation_without_its_form_key_changes_nothing(casino, machine, floor):
    receipt = _request(machine)
    client = _login(floor, casino)
    client.post(f"/floor/handpays/{receipt.pk}/confirm/", {})
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "requested"


def test_a_cashier_cannot_confirm_a_handpay(casino, machine, cashier):
    receipt = _request(machine)
    response = _login(cashier, casino).post(f"/floor/handpays/{receipt.pk}/confirm/", with_key({}))
    assert response.status_code == 403
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "requested"


def test_the_supervisor_screen_lists_open_handpays_and_voids_one(casino, machine, supervisor):
    receipt = _request(machine, amount="3000.00")
    client = _login(supervisor, casino)
    page = client.get("/supervisor/").content.decode()
    assert "Handpays" in page
    assert format_money(Decimal("3000.00")) in page
    client.post(f"/supervisor/handpays/{receipt.pk}/void/", {"reason": ""})
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "requested"
    client.post(f"/supervisor/handpays/{receipt.pk}/void/", {"reason": "test jackpot"})
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "void"


def test_the_desk_pays_a_confirmed_handpay_by_the_printed_number(casino, machine, floor, shift, cashier, person):
    receipt = _confirm(_request(machine, amount="200.00"), floor)
    client = _login(cashier, casino)
    response = client.post(
        "/desk/receipt-payout/",
        with_key({"receipt_number": receipt.display_number, "check_code": receipt.check_code}),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "paid"


def test_the_desk_form_says_a_mistyped_number_plainly(casino, shift, cashier):
    client = _login(cashier, casino)
    wrong = "123456789012" + str((int(damm.calc_check_digit("123456789012")) + 1) % 10)
    response = client.post("/desk/receipt-payout/", with_key({"receipt_number": wrong, "check_code": "1"}))
    assert response.status_code == 200
    assert "This is not a machine receipt number" in response.content.decode()


# --- Receipts already printed keep their numbers ------------------------------------------------

BEFORE_HANDPAYS = ("cashdesk", "0013_leg_count_in_bigint")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_receipts_written_before_handpays_keep_their_printed_numbers():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE_HANDPAYS])
    try:
        executor = MigrationExecutor(connection)
        old = executor.loader.project_state(sorted(executor.loader.applied_migrations)).apps
        casino = old.get_model("machines", "Casino").objects.create(
            name="Casino Senas", address="Demo g. 1", licence_number="L-1", code="OLD"
        )
        machine = old.get_model("machines", "Machine").objects.create(casino=casino, asset_number="1001")
        attendant = old.get_model("auth", "User").objects.create(username="tomas", password="!")
        written = timezone.now()
        receipt = old.get_model("cashdesk", "MachineReceipt").objects.create(
            casino=casino,
            machine=machine,
            number=123,
            check_code="654321",
            amount=Decimal("40.00"),
            reason="Hopper empty",
            created_by=attendant,
            created_at=written,
        )
    finally:
        MigrationExecutor(connection).migrate(latest)

    kept = MachineReceipt.objects.get(pk=receipt.pk)
    assert (kept.number, kept.display_number) == ("123", "R000123")
    assert (kept.source, kept.kind, kept.state) == ("floor", "floor", "confirmed")
    assert (kept.confirmed_by_id, kept.confirmed_at) == (attendant.pk, written)
    assert parse_receipt_number("TOR-R000123") == kept.number


# --- The meter reconciliation's handpay figure ---------------------------------------------


def test_the_reconciliation_counts_the_handpays_confirmed_at_each_machine(machine, floor, supervisor):
    from cashdesk.services.handpays import handpays_at_machines
    from tickets import reconciliation

    assert handpays_at_machines in reconciliation.handpay_sources()  # registered by the app at start
    begin = timezone.now()
    _request(machine, amount="100.00", request_id="waiting")  # requested, not confirmed: not on the meter yet
    receipt = MachineReceipt.objects.get(request_id="waiting")
    handpay_void(receipt_id=receipt.pk, casino_id=receipt.casino_id, user=supervisor, reason="test lockup")
    confirmed = _confirm(_request(machine, amount="2500.50", request_id="won"), floor)
    _request(machine, amount="40.00", request_id="later")  # still waiting at the end
    finish = timezone.now()
    assert confirmed.confirmed_at is not None
    assert handpays_at_machines(machine.casino, [machine.pk], begin, finish) == {machine.pk: (1, Decimal("2500.50"))}
    assert handpays_at_machines(machine.casino, [machine.pk], finish, finish + dt.timedelta(hours=1)) == {}


def test_the_cash_receipt_names_the_machine_receipt_it_paid(machine, floor, shift, cashier, casino):
    from tests.cashdesk.test_printing import pdf_text

    receipt = _confirm(_request(machine, amount="250.00", kind="cancelled_credits"), floor)
    tx = services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    tail = receipt.number[-4:]
    page = _login(cashier, casino).get(f"/desk/transactions/{tx.pk}/").content.decode()
    assert f"…{tail}" in page  # the paper is matched to the handpay by its last digits and the machine
    assert machine.asset_number in page
    assert receipt.number not in page.replace(" ", "")  # never the whole number: it is not paper to pay again
    text = pdf_text(printing.receipt_pdf(tx))
    assert f"…{tail}" in text
    assert machine.asset_number in text
