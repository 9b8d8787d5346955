from tests.cashdesk.conftest import (  # noqa: F401 - shared fixtures
    cashier,
    cashier2,
    compliance,
    desk,
    floor,
    manager,
    person,
    shift,
    supervisor,
    vault,
)
