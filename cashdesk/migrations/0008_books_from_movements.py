"""Today's cash-desk data into the double-entry books.

Every movement becomes a leg at its place; each transaction gets the
counterparty legs that balance it (players, tickets, receipts, smart cards);
every count's difference from the running book balance is posted (to opening
balances for a place's first count, to over/short after), so that each
place's book balance equals its last count, as the services keep it from now on.
Shift figures (opening, movements, expected, counted, variance) do not change.
"""

import secrets
from collections import defaultdict
from decimal import Decimal

from django.db import migrations
from django.db.models import OuterRef, Subquery

from casino_office.migrations._frozen import _statements

COUNTERPARTY_OF_KIND = {
    "ticket_payout": "tickets",
    "ticket_sale": "tickets",
    "chips_buy": "players",
    "chips_cashout": "players",
    "tokens_buy": "players",
    "tokens_cashout": "players",
    "smartcard_payout": "smartcards",
    "receipt_payout": "receipts",
}
DENOMINATIONS = {
    "chip_500": Decimal("500"),
    "chip_100": Decimal("100"),
    "chip_25": Decimal("25"),
    "chip_5": Decimal("5"),
    "chip_1": Decimal("1"),
    "chip_0_50": Decimal("0.50"),
    "token": Decimal("1"),
}


def _without_append_only(schema_editor, table, work):
    """Run `work` with the table's append-only triggers lifted, and put them back."""
    create, drop = _statements(schema_editor.connection.vendor, table)
    for sql in drop:
        schema_editor.execute(sql, params=None)
    work()
    for sql in create:
        schema_editor.execute(sql, params=None)


def forward(apps, schema_editor):
    CashDesk = apps.get_model("cashdesk", "CashDesk")
    CashTransaction = apps.get_model("cashdesk", "CashTransaction")
    Leg = apps.get_model("cashdesk", "Leg")
    MachineReceipt = apps.get_model("cashdesk", "MachineReceipt")
    Movement = apps.get_model("cashdesk", "Movement")
    Shift = apps.get_model("cashdesk", "Shift")
    ShiftCount = apps.get_model("cashdesk", "ShiftCount")

    for receipt in MachineReceipt.objects.filter(check_code=""):
        receipt.check_code = f"{secrets.randbelow(1_000_000):06d}"
        receipt.save(update_fields=["check_code"])
    ShiftCount.objects.filter(desk__isnull=True).update(
        desk=Subquery(Shift.objects.filter(pk=OuterRef("shift_id")).values("desk_id")[:1])
    )
    paid = list(MachineReceipt.objects.filter(paid_by__isnull=False).values_list("pk", "paid_by_id"))
    if paid:

        def link_receipts():
            for receipt_id, tx_id in paid:
                CashTransaction.objects.filter(pk=tx_id).update(machine_receipt_id=receipt_id)

        _without_append_only(schema_editor, "cashdesk_cashtransaction", link_receipts)

    # Legs: each movement, then the counterparty side of each transaction.
    kinds = dict(CashTransaction.objects.values_list("pk", "kind"))
    reverses = dict(CashTransaction.objects.filter(reverses__isnull=False).values_list("pk", "reverses_id"))
    casinos = dict(CashTransaction.objects.values_list("pk", "casino_id"))
    legs = []
    sides: dict[tuple[int, str], list[Decimal | int]] = defaultdict(lambda: [Decimal("0"), 0])
    for m in Movement.objects.order_by("pk").iterator():
        legs.append(
            Leg(
                transaction_id=m.transaction_id,
                casino_id=casinos[m.transaction_id],
                desk_id=m.desk_id,
                shift_id=m.shift_id,
                item=m.item,
                count=m.count,
                amount=m.amount,
            )
        )
        side = sides[(m.transaction_id, m.item)]
        side[0] += m.amount
        side[1] += m.count or 0
    for (tx_id, item), (amount, count) in sides.items():
        if amount == 0:
            continue  # drops and fills: the desk's and the vault's movements balance already
        kind = kinds[tx_id]
        if kind == "reversal":
            kind = kinds[reverses[tx_id]]
        legs.append(
            Leg(
                transaction_id=tx_id,
                casino_id=casinos[tx_id],
                counterparty=COUNTERPARTY_OF_KIND.get(kind, "over_short"),
                item=item,
                count=-count if item in DENOMINATIONS else None,
                amount=-amount,
            )
        )
    Leg.objects.bulk_create(legs, batch_size=2000)

    # Counts: post each count's difference from the running book balance of its desk.
    for desk in CashDesk.objects.order_by("pk"):
        book: dict[str, Decimal] = defaultdict(lambda: Decimal("0"))
        seen_legs = False
        events = [
            (tx.created_at, 1, tx.pk, "tx")
            for tx in CashTransaction.objects.filter(legs__desk=desk).distinct().only("pk", "created_at")
        ] + [(c.counted_at, 0, c.pk, "count") for c in ShiftCount.objects.filter(desk=desk).only("pk", "counted_at")]
        # A count and the transactions of the same moment: counts first (an opening precedes its shift's work).
        for _at, _order, pk, what in sorted(events):
            if what == "tx":
                for leg in Leg.objects.filter(transaction_id=pk, desk=desk):
                    book[leg.item] += leg.amount
                    seen_legs = True
                continue
            count = ShiftCount.objects.select_related("shift").get(pk=pk)
            differences = [
                (line.item, line.counted_amount - book[line.item])
                for line in count.lines.order_by("pk")
                if line.counted_amount != book[line.item]
            ]
            if not differences:
                continue
            desk.refresh_from_db()
            desk.last_receipt_number += 1
            CashDesk.objects.filter(pk=desk.pk).update(last_receipt_number=desk.last_receipt_number)
            casino = desk.casino
            posting = CashTransaction.objects.create(
                casino_id=desk.casino_id,
                desk=desk,
                shift=count.shift,
                number=desk.last_receipt_number,
                kind="count",
                amount=sum((abs(d) for _i, d in differences), Decimal("0")),
                identity_threshold=casino.identity_threshold,
                note=count.kind,
                created_by_id=count.counted_by_id,
                created_at=count.counted_at,
            )
            party = "over_short" if seen_legs else "opening"
            for item, difference in differences:
                pieces = int(difference / DENOMINATIONS[item]) if item in DENOMINATIONS else None
                Leg.objects.create(
                    transaction=posting,
                    casino_id=desk.casino_id,
                    desk=desk,
                    shift=count.shift,
                    item=item,
                    count=pieces,
                    amount=difference,
                )
                Leg.objects.create(
                    transaction=posting,
                    casino_id=desk.casino_id,
                    counterparty=party,
                    item=item,
                    count=-pieces if pieces is not None else None,
                    amount=-difference,
                )
                book[item] += difference
            seen_legs = True
            ShiftCount.objects.filter(pk=count.pk).update(transaction=posting)


class Migration(migrations.Migration):
    dependencies = [("cashdesk", "0007_money_core")]

    operations = [migrations.RunPython(forward, migrations.RunPython.noop, elidable=False)]
