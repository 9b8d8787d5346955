"""The demo's kiosks (issue 14): seed_demo fills them from the vault, manage.py kiosk_cash shows, fills and drops."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.items import Item
from cashdesk.models import CashTransaction, TransactionKind, Transfer
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_request
from machines.keys import hash_key
from machines.models import Casino, Machine, Place
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.factories import MachineFactory, make_user


def seed() -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def kiosk_cash(*args: str) -> str:
    out = StringIO()
    call_command("kiosk_cash", *args, stdout=out)
    return out.getvalue()


def cash(place: Place) -> Decimal:
    return place_balances(place)[Item.CASH]


@pytest.fixture
def demo(settings):
    settings.DEMO = True


@pytest.fixture
def tornado(casino, demo):
    """Casino Tornado as seed_demo leaves it, in short: its demo attendant and supervisor, the vault, two kiosks."""
    make_user("salesdarbuotojas-tor", "floor_attendant")
    supervisor = make_user("pamainosvadove-tor", "shift_supervisor")
    vault = Place.objects.create(casino=casino, code="V", name="Seifas", kind=Place.Kind.VAULT)
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("200000.00")})
    for asset in ("9001", "9002"):
        MachineFactory(casino=casino, asset_number=asset, kind=Machine.Kind.KIOSK)
    kiosk_cash("9001", "--fill", "10000.00")
    kiosk_cash("9002", "--fill", "3000.00")
    return casino


def test_seed_demo_makes_two_kiosks_per_casino_filled_from_the_counted_vault(db, demo):
    seed()

    for casino in Casino.objects.filter(code__in=["TOR", "ADM"]):
        kiosks = Machine.objects.filter(casino=casino, kind=Machine.Kind.KIOSK).order_by("asset_number")
        assert [k.asset_number for k in kiosks] == ["9001", "9002"]
        assert all(k.ticket_enrolled and k.may_use_ticket_system for k in kiosks)
        code = casino.code.lower()
        assert kiosks[0].api_key_hash == hash_key(f"demo-{code}-9001")
        assert [cash(kiosk_place(k)) for k in kiosks] == [Decimal("10000.00"), Decimal("3000.00")]
        vault = Place.objects.get(casino=casino, kind=Place.Kind.VAULT)
        assert cash(vault) == Decimal("200000.00") - Decimal("13000.00")
        transfers = Transfer.objects.filter(place__casino=casino).select_related("requested_by", "approved_by")
        assert {(t.direction, t.requested_by.username, t.approved_by.username) for t in transfers} == {
            ("fill", f"salesdarbuotojas-{code}", f"pamainosvadove-{code}")
        }
        assert transfers.count() == 2
        assert_books_balance(casino)


def test_seed_demo_again_changes_nothing_in_the_books(db, demo):
    seed()
    transactions = CashTransaction.objects.count()
    balances = {place.pk: cash(place) for place in Place.objects.all()}

    seed()

    assert CashTransaction.objects.count() == transactions
    assert {place.pk: cash(place) for place in Place.objects.all()} == balances
    assert Machine.objects.filter(kind=Machine.Kind.KIOSK).count() == 4


def test_seed_demo_leaves_a_vault_counted_before_and_fills_only_what_it_holds(db, demo):
    casino = Casino.objects.create(code="TOR", name="Casino Tornado", address="Demo g. 1", licence_number="L-1")
    vault = Place.objects.create(casino=casino, code="V", name="Seifas", kind=Place.Kind.VAULT)
    services.vault_count(vault=vault, user=make_user("rasa", "shift_supervisor"), counted={"cash": Decimal("5000")})

    output = seed()

    assert "Kiosk 9001 (TOR) not filled: the vault holds less than 10000.00 EUR" in output
    by_asset = {k.asset_number: k for k in Machine.objects.filter(casino=casino, kind=Machine.Kind.KIOSK)}
    assert cash(kiosk_place(by_asset["9001"])) == 0
    assert cash(kiosk_place(by_asset["9002"])) == Decimal("3000.00")
    assert cash(vault) == Decimal("2000.00")
    assert not Transfer.objects.filter(approved_at__isnull=True).exists()  # nothing left waiting
    assert vault.counts.count() == 1


def test_kiosk_cash_shows_fills_to_a_level_and_drops(tornado, other_casino):
    assert kiosk_cash().splitlines() == ["Kiosk 9001 (TOR) holds 10000.00 EUR", "Kiosk 9002 (TOR) holds 3000.00 EUR"]

    filled = kiosk_cash("9002", "--fill-to", "8000.00")

    assert filled.strip() == (
        "Kiosk 9002 (TOR) filled from the vault with 5000.00 EUR "
        "(asked by salesdarbuotojas-tor, approved by pamainosvadove-tor); it holds 8000.00 EUR"
    )
    assert kiosk_cash("9002", "--fill-to", "8000.00").strip() == "Kiosk 9002 (TOR) holds 8000.00 EUR: no fill needed"
    dropped = kiosk_cash("9001", "--drop", "9990.00")
    assert "dropped to the vault: 9990.00 EUR" in dropped
    assert cash(kiosk_place(Machine.objects.get(casino=tornado, asset_number="9001"))) == 0  # 10.00 short
    vault = Place.objects.get(casino=tornado, kind=Place.Kind.VAULT)
    assert cash(vault) == Decimal("200000.00") - Decimal("10000.00") - Decimal("8000.00") + Decimal("9990.00")
    assert_books_balance(tornado)
    assert kiosk_cash("--casino", other_casino.code) == ""  # a casino without kiosks


def test_kiosk_cash_shows_a_transfer_waiting(tornado):
    kiosk = Machine.objects.get(casino=tornado, asset_number="9001")
    floor = make_user("tomas", "floor_attendant")
    kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("100.00"))
    assert "a drop of 100.00 EUR waits for approval" in kiosk_cash("9001")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["9003", "--fill", "1.00"], "casino TOR has no kiosk 9003"),
        (["--fill", "1.00"], "name the one kiosk to fill or drop"),
        (["9001", "--fill", "25000.00"], "kiosk 9001: "),  # over the kiosk's capacity
        (["9001", "--fill", "1.00", "--approved-by", "salesdarbuotojas-tor"], "kiosk 9001: "),  # not a supervisor
        (["9001", "--fill", "1.00", "--requested-by", "nobody"], "no active user nobody"),
        (["--casino", "XXX"], "no casino XXX"),
    ],
)
def test_kiosk_cash_refusals_change_nothing(tornado, args, message):
    before = CashTransaction.objects.count()
    with pytest.raises(CommandError, match=message):
        kiosk_cash(*args)
    assert CashTransaction.objects.count() == before
    assert not Transfer.objects.filter(approved_at__isnull=True).exists()


def test_kiosk_cash_fills_and_drops_only_in_demo_mode(tornado, settings):
    settings.DEMO = False
    with pytest.raises(CommandError, match="demo mode only"):
        kiosk_cash("9001", "--fill", "1.00")
    assert not CashTransaction.objects.filter(kind=TransactionKind.FILL, amount=Decimal("1.00")).exists()
    assert "holds 10000.00 EUR" in kiosk_cash("9001")  # showing is allowed
