"""Kiosk transfers moved into the one Transfer model (cashdesk 0027-0029), and back when the migrations are unapplied.

The demo's data (seed_demo: each kiosk filled from the vault) with a transfer of every kind beside it: a desk's
approved fill and waiting drop, a kiosk's counted drop, a drop counting nothing, a cancelled fill and a drop whose
count waits for a second supervisor. Unapplied to cashdesk 0026 they are the kiosk transfers the code before wrote
(the count request pointing at its kiosk transfer); applied again they are the same transfers as before, each
naming its place, with its cash line, the desk's approvals read back from their transactions.
"""

from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.models import CountRequest, Transfer
from cashdesk.services.kiosks import kiosk_transfer_approve, kiosk_transfer_cancel, kiosk_transfer_request
from machines.models import Machine, Place

BEFORE_THE_MERGE = [("cashdesk", "0026_triggers_name_their_tables_schema")]
SHARED = (
    "direction",
    "amount",
    "requested_by_id",
    "requested_at",
    "transaction_id",
    "count_id",
    "approved_by_id",
    "approved_at",
    "cancelled_by_id",
    "cancelled_at",
    "operation_key",
)


def _every_kind_of_transfer() -> None:
    """Beside the demo's fills: what the desk and the kiosks of Casino Tornado do in a day."""
    cashier, floor, supervisor = (
        User.objects.get(username=name) for name in ("kasininke-tor", "salesdarbuotojas-tor", "pamainosvadove-tor")
    )
    desk = Place.objects.filter(casino__code="TOR", kind=Place.Kind.DESK).order_by("pk").first()
    assert desk is not None
    shift = services.shift_open(desk=desk, cashier=cashier, counted=dict(place_balances(desk)))
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("5000.00"))
    services.transfer_approve(transfer=fill, supervisor=supervisor)
    services.transfer_request(
        shift=shift, user=cashier, direction="drop", amount=Decimal("100.00"), operation_key="a" * 32
    )
    first, second = Machine.objects.filter(casino__code="TOR", kind=Machine.Kind.KIOSK).order_by("asset_number")
    for counted in ("9990.00", "0"):
        drop = kiosk_transfer_request(machine=first, user=floor, direction="drop", amount=Decimal(counted))
        kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
    cancelled = kiosk_transfer_request(
        machine=first, user=floor, direction="fill", amount=Decimal("50.00"), operation_key="b" * 32
    )
    kiosk_transfer_cancel(transfer=cancelled, user=floor)
    over_the_limit = kiosk_transfer_request(machine=second, user=floor, direction="drop", amount=Decimal("1000.00"))
    kiosk_transfer_approve(transfer=over_the_limit, supervisor=supervisor)


def _transfers() -> list[tuple[Any, ...]]:
    """Every transfer as it reads without its id: its place and shift, its fields, lines and count request."""
    rows = []
    for transfer in Transfer.objects.prefetch_related("lines").select_related("count_request"):
        request = getattr(transfer, "count_request", None)
        rows.append(
            (
                transfer.place_id,
                transfer.shift_id,
                *(getattr(transfer, name) for name in SHARED),
                tuple((line.item, line.count, line.amount) for line in transfer.lines.all()),
                request.pk if request is not None else None,
            )
        )
    return sorted(rows, key=lambda row: (row[SHARED.index("requested_at") + 2], row[0]))


def _kiosk_transfers_before_the_merge(old) -> list[tuple[Any, ...]]:
    requests = dict(old.get_model("cashdesk", "CountRequest").objects.values_list("kiosk_transfer_id", "pk"))
    return sorted(
        (
            (transfer.kiosk_id, None, *(getattr(transfer, name) for name in SHARED), requests.get(transfer.pk))
            for transfer in old.get_model("cashdesk", "KioskTransfer").objects.all()
        ),
        key=lambda row: (row[SHARED.index("requested_at") + 2], row[0]),
    )


@pytest.mark.slow  # seeds the demo and migrates the database back and forth
@pytest.mark.django_db(transaction=True)
def test_the_demos_transfers_go_back_to_kiosk_transfers_and_come_forward_unchanged(settings):
    settings.DEMO = True
    call_command("seed_demo", stdout=StringIO())
    _every_kind_of_transfer()
    merged = _transfers()
    kiosks = [row for row in merged if row[1] is None]
    assert len(kiosks) == 8  # the demo's four fills, two drops, a cancelled fill, a drop waiting for its count
    assert sum(row[-1] is not None for row in kiosks) == 1
    amount = 2 + SHARED.index("amount")
    assert all(row[-2] == ((("cash", None, row[amount]),) if row[amount] else ()) for row in kiosks)
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    MigrationExecutor(connection).migrate(BEFORE_THE_MERGE)
    try:
        executor = MigrationExecutor(connection)
        old = executor.loader.project_state(sorted(executor.loader.applied_migrations)).apps
        before = _kiosk_transfers_before_the_merge(old)
        desk_transfers = old.get_model("cashdesk", "Transfer").objects.count()
        lines = old.get_model("cashdesk", "TransferLine").objects.count()
    finally:
        MigrationExecutor(connection).migrate(latest)

    # Unapplied: the kiosks' transfers as the kiosk's model held them, the count request with its drop.
    assert before == [(*row[:-2], row[-1]) for row in kiosks]
    assert (desk_transfers, lines) == (2, 2)
    # Applied again: the same transfers, new ids for the kiosks' (the count request follows its drop).
    assert _transfers() == merged
    waiting = CountRequest.objects.get(status=CountRequest.Status.WAITING)
    assert (waiting.transfer.direction, waiting.transfer.amount) == ("drop", Decimal("1000.00"))
    assert waiting.transfer.place == waiting.desk
