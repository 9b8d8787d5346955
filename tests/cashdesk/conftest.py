from decimal import Decimal

import pytest

from cashdesk import services
from machines.models import Place
from tests.factories import make_user

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
