"""The places that hold value moved from the cash desk to the bottom layer (machines.Place) without touching a row.

The migrations are state-only: the table, its rows and every foreign key into it stay. A database migrated from
the code before the move, with a desk, a vault, a ticket sold at the desk and a register entry, keeps them all, and
the register no longer refers to the desk's shift or transaction by a foreign key (only by their ids).
"""

import datetime as dt
from decimal import Decimal

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from compliance.models import RegisterEntry
from machines.models import Place
from tickets.models import Ticket

BEFORE_THE_MOVE = [
    ("machines", "0009_meter_attendant_paid_credits"),
    ("tickets", "0011_reservednumber_fixed"),
    ("compliance", "0009_alert_kind_structuring_casino"),
    ("cashdesk", "0022_count_operation_key"),
]


def _write_before_the_move(old) -> dict[str, int]:
    casino = old.get_model("machines", "Casino").objects.create(
        name="Casino Senas", address="Demo g. 1", licence_number="L-1", code="OLD"
    )
    desks = old.get_model("cashdesk", "CashDesk").objects
    desk = desks.create(casino=casino, kind="desk", code="K1", name="Kasa 1", last_receipt_number=7)
    vault = desks.create(casino=casino, kind="vault", code="V", name="Saugykla")
    cashier = old.get_model("auth", "User").objects.create(username="kasininke", password="!")
    now = timezone.now()
    shift = old.get_model("cashdesk", "Shift").objects.create(desk=desk, cashier=cashier, opened_at=now)
    ticket = old.get_model("tickets", "Ticket").objects.create(
        casino=casino,
        validation_number="001234567890123456",
        sequence=1,
        amount=Decimal("1500.00"),
        state="issued",
        issued_at=now,
        printed_at=now,
        expires_at=now + dt.timedelta(days=30),
        issuing_desk=desk,
    )
    # A count difference: a transaction the old books accept on its own (its legs are not the point here).
    posted = old.get_model("cashdesk", "CashTransaction").objects.create(
        casino=casino,
        desk=desk,
        shift=shift,
        number=1,
        kind="count",
        amount=Decimal("10.00"),
        identity_threshold=Decimal("1000.00"),
        created_by=cashier,
        created_at=now,
    )
    person = old.get_model("compliance", "Person").objects.create(
        given_names="Ona", surnames="Onaitė", date_of_birth=dt.date(1980, 1, 2), document_type="passport"
    )
    entry = old.get_model("compliance", "RegisterEntry").objects.create(
        casino=casino,
        sequence=1,
        person=person,
        kind="ticket_sale",
        amount=Decimal("1500.00"),
        desk=desk,
        shift=shift,
        cashier=cashier,
        transaction=posted,
        created_at=now,
        gaming_day=now.date(),
        self_excluded=False,
        previous_hash="0" * 64,
        entry_hash="f" * 64,
        note="written before the move",
    )
    return {
        "desk": desk.pk,
        "vault": vault.pk,
        "ticket": ticket.pk,
        "entry": entry.pk,
        "shift": shift.pk,
        "tx": posted.pk,
    }


def _register_targets() -> set[str]:
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, "compliance_registerentry")
    return {info["foreign_key"][0] for info in constraints.values() if info["foreign_key"]}


@pytest.mark.slow  # migrates the database back and forth
@pytest.mark.django_db(transaction=True)
def test_places_rows_and_references_survive_the_move():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    MigrationExecutor(connection).migrate(BEFORE_THE_MOVE)
    try:
        # Unapplied, the move gives the older code its register's foreign keys back.
        assert {"cashdesk_shift", "cashdesk_cashtransaction"} <= _register_targets()
        executor = MigrationExecutor(connection)
        old = executor.loader.project_state(sorted(executor.loader.applied_migrations)).apps
        ids = _write_before_the_move(old)
    finally:
        MigrationExecutor(connection).migrate(latest)

    desk, vault = Place.objects.get(pk=ids["desk"]), Place.objects.get(pk=ids["vault"])
    assert (desk.kind, desk.code, desk.name, desk.last_receipt_number) == ("desk", "K1", "Kasa 1", 7)
    assert (vault.kind, vault.casino_id) == ("vault", desk.casino_id)
    assert Ticket.objects.get(pk=ids["ticket"]).issuing_desk == desk
    entry = RegisterEntry.objects.get(pk=ids["entry"])
    assert (entry.desk, entry.shift_id, entry.transaction_id) == (desk, ids["shift"], ids["tx"])
    assert ContentType.objects.filter(app_label="machines", model="place").exists()
    assert not ContentType.objects.filter(app_label="cashdesk", model="cashdesk").exists()
    targets = _register_targets()
    assert "cashdesk_cashdesk" in targets  # the place's table, now the casino's
    assert not targets & {"cashdesk_shift", "cashdesk_cashtransaction"}
