import re
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.models import Leg
from cashdesk.services.tables import table_create
from machines.models import Machine, Place, TableGame
from staff.models import StaffAssignment
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user

FLOAT = {
    "cash": Decimal("20000.00"),
    "chip_500": 20,
    "chip_100": 50,
    "chip_25": 100,
    "chip_5": 100,
    "chip_1": 200,
    "chip_0_50": 200,
    "token": 2000,
}


@pytest.fixture
def cashier(db):
    return make_user("ona", "cashier")


@pytest.fixture
def cashier2(db):
    return make_user("jonas", "cashier")


@pytest.fixture
def supervisor(db):
    return make_user("rasa", "shift_supervisor")


@pytest.fixture
def floor(db):
    return make_user("tomas", "floor_attendant")


@pytest.fixture
def compliance(db):
    return make_user("ieva", "compliance_officer")


@pytest.fixture
def manager(db):
    return make_user("petras", "manager")


@pytest.fixture
def desk(casino):
    return Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))


@pytest.fixture
def vault(casino):
    return Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)


VAULT_CASH = Decimal("100000.00")


@pytest.fixture
def stocked_vault(vault, supervisor):
    """The vault with its cash counted into the books: what fills (of kiosks, of desks) are taken from."""
    services.vault_count(vault=vault, user=supervisor, counted={"cash": VAULT_CASH})
    return vault


@pytest.fixture
def shift(desk, cashier):
    return services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)


@pytest.fixture
def person(db):
    from tests.factories import make_person

    return make_person()


def unbalanced_items(casino):
    """Every item's legs over the whole casino sum to zero."""
    total = {}
    for leg in Leg.objects.filter(casino=casino):
        total[leg.item] = total.get(leg.item, Decimal(0)) + leg.amount
    return {item: amount for item, amount in total.items() if amount}


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK)


@pytest.fixture
def kiosk_api(kiosk) -> MachineClient:
    return MachineClient(kiosk)


@pytest.fixture
def stocked_kiosk(kiosk, stocked_vault, floor, supervisor) -> Machine:
    from tests.cashdesk.test_kiosks import fill  # imported here: test_kiosks imports this conftest

    fill(kiosk, floor, supervisor, amount="1000.00")
    return kiosk


MONEY = re.compile(r"€\s?\d")


def logged_in_client(user, casino, *, raise_errors: bool = False) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client(raise_request_exception=raise_errors)
    client.force_login(user)
    return client


@pytest.fixture
def desk_client(shift, cashier, casino):
    return logged_in_client(cashier, casino)


def count_form_data(**overrides):
    data = {item: str(value) for item, value in FLOAT.items()}
    data.update({k: str(v) for k, v in overrides.items()})
    return data


BAD_DAYS = [
    "0000-00-00",
    "9999-12-31",
    "0001-01-01",
    "1999-12-31",
    "3000-01-01",
    "2024-02-30",
    "2024-13-01",
    "x" * 20_000,
    "2024-01-01\x00",
    "\x00",
    "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661"  # Arabic-Indic digits,
    "\uff12\uff10\uff12\uff14-\uff10\uff11-\uff10\uff11"  # full-width digits,
    " 2024-01-01 ",
    "2024-1-1",
    "+2024-01-01",
    "20240101",
    "2024-W01-1",
    "2024-01-01T00:00",
    "-1",
]


REPORTS = ["daily", "liability", "exceptions", "books", "overshort", "machines", "desks"]


@pytest.fixture
def reports_client(manager, casino):
    return logged_in_client(manager, casino)


# A gaming table of the casino's (issue 24), its pit supervisor and a croupier of its staff.
@pytest.fixture
def pit_supervisor(casino):
    user = make_user("salesvadove", "pit_supervisor")
    StaffAssignment.objects.create(user=user, casino=casino)
    return user


@pytest.fixture
def croupier(casino):
    user = make_user("krupjė")
    StaffAssignment.objects.create(user=user, casino=casino)
    return user


@pytest.fixture
def table(casino):
    return table_create(casino=casino, number="AR1", game=TableGame.AMERICAN_ROULETTE)
